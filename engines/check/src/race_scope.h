// The scope of a strong access or fence (PTX ISA, "Scope"): which threads it synchronizes
// with. A release and an acquire order two threads only when each one's scope contains the
// other thread (they are "morally strong"): a .cta fence or atomic publishes to its own CTA,
// .cluster to its cluster, .gpu and .sys to every CTA of the launch.
#pragma once

#include <cstdint>
#include <string_view>

namespace kiln::check::race {

enum class Scope : uint8_t { Cta = 0, Cluster = 1, Gpu = 2, Sys = 3 };

// The scope an instruction's text names: .cta/.cluster/.gpu/.sys on the opcode, membar.cta
// (__threadfence_block), membar.gl (__threadfence), membar.sys; .volatile is .sys, and a
// strong access or fence without a scope is .gpu (PTX's default for atom, red and fence).
Scope scope_of(std::string_view instruction);

// A CTA of the launch, for scopes: the cluster it ran in (sequence number) and its id there.
struct ScopeSite {
  uint32_t cluster = 0;
  uint32_t cta = 0;  // cluster * cluster_size + rank: unique in the launch
};

// Whether `scope`, used by a thread at `self`, includes the thread at `other`.
inline bool includes(Scope scope, const ScopeSite& self, const ScopeSite& other) {
  if (scope >= Scope::Gpu) return true;
  if (scope == Scope::Cluster) return self.cluster == other.cluster;
  return self.cta == other.cta;
}

}  // namespace kiln::check::race
