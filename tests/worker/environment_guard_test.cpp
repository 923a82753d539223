// environment_guard.h: what a candidate's load-time code does to the environment is put back.
#include "kiln/worker/environment_guard.h"

#include <gmock/gmock.h>

#include <cstdlib>

namespace kiln::worker {
namespace {

using ::testing::UnorderedElementsAre;

TEST(EnvironmentGuard, PutsBackWhatWasAddedChangedOrRemovedAndNamesIt) {
  setenv("KILN_TEST_KEPT", "same", 1);
  setenv("KILN_TEST_CHANGED", "before", 1);
  setenv("KILN_TEST_REMOVED", "there", 1);
  unsetenv("KILN_TEST_ADDED");
  const EnvironmentGuard guard;
  setenv("KILN_TEST_ADDED", "new", 1);
  setenv("KILN_TEST_CHANGED", "after", 1);
  unsetenv("KILN_TEST_REMOVED");
  EXPECT_THAT(guard.restore(),
              UnorderedElementsAre("set KILN_TEST_ADDED", "changed KILN_TEST_CHANGED",
                                   "removed KILN_TEST_REMOVED"));
  EXPECT_EQ(std::getenv("KILN_TEST_ADDED"), nullptr);
  EXPECT_STREQ(std::getenv("KILN_TEST_CHANGED"), "before");
  EXPECT_STREQ(std::getenv("KILN_TEST_REMOVED"), "there");
  EXPECT_STREQ(std::getenv("KILN_TEST_KEPT"), "same");
  EXPECT_TRUE(guard.restore().empty());  // nothing left to put back
  unsetenv("KILN_TEST_KEPT");
  unsetenv("KILN_TEST_CHANGED");
  unsetenv("KILN_TEST_REMOVED");
}

TEST(EnvironmentGuard, SaysNothingWhenNothingChanged) {
  const EnvironmentGuard guard;
  EXPECT_TRUE(guard.restore().empty());
}

}  // namespace
}  // namespace kiln::worker
