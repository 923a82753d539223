// The scope an instruction's text names, as the race detector reads it (race_scope.h).
#include "race_scope.h"

#include <gtest/gtest.h>

namespace kiln::check::race {
namespace {

TEST(RaceScope, ReadsTheScopeOfTheOpcode) {
  EXPECT_EQ(scope_of("atom.global.cta.add.u32 %r1, [%rd1], 1;"), Scope::Cta);
  EXPECT_EQ(scope_of("st.release.cluster.shared::cluster.b32 [%r1], %r2;"), Scope::Cluster);
  EXPECT_EQ(scope_of("ld.acquire.gpu.global.b32 %r1, [%rd1];"), Scope::Gpu);
  EXPECT_EQ(scope_of("fence.sc.sys;"), Scope::Sys);
  EXPECT_EQ(scope_of("fence.acq_rel.cta;"), Scope::Cta);
}

TEST(RaceScope, MembarAndVolatileHaveTheirImpliedScopes) {
  EXPECT_EQ(scope_of("membar.cta;"), Scope::Cta);
  EXPECT_EQ(scope_of("membar.gl;"), Scope::Gpu);
  EXPECT_EQ(scope_of("membar.sys;"), Scope::Sys);
  EXPECT_EQ(scope_of("ld.volatile.global.u32 %r1, [%rd1];"), Scope::Sys);
}

TEST(RaceScope, AStateSpaceOrOperandIsNotAScope) {
  // shared::cta names the state space; an atom without a scope is .gpu.
  EXPECT_EQ(scope_of("atom.shared::cta.add.u32 %r1, [%r2], 1;"), Scope::Gpu);
  EXPECT_EQ(scope_of("atom.global.add.u32 %r1, [%rd1], %r2;  // .cta"), Scope::Gpu);
  EXPECT_EQ(scope_of("@%p1 red.cta.global.add.u32 [%rd1], 1;"), Scope::Cta);
  EXPECT_EQ(scope_of(""), Scope::Gpu);
}

}  // namespace
}  // namespace kiln::check::race
