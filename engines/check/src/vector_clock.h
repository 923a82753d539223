// Vector clocks for the dynamic race detector. The simulator runs one cluster of CTAs at a time,
// so a clock keeps a dense vector over the running cluster's slots (its threads, then one async
// proxy slot per thread) and, for the rare knowledge of earlier clusters (through atomics and
// flags in global memory), sparse vectors by cluster sequence number.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "race_scope.h"

namespace kiln::check::race {

inline void join_into(std::vector<uint32_t>& into, const std::vector<uint32_t>& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  // Four entries at a time in vector registers: a barrier joins every thread's clock. As signed
  // numbers, since the x86-64 baseline (SSE2) compares only those; epochs stay far below 2^31.
  using Lanes = int32_t __attribute__((vector_size(16)));
  uint32_t* to = into.data();
  const uint32_t* by = from.data();
  const size_t n = from.size();
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    Lanes a, b;
    std::memcpy(&a, to + i, sizeof a);
    std::memcpy(&b, by + i, sizeof b);
    const Lanes m = a > b ? a : b;
    std::memcpy(to + i, &m, sizeof m);
  }
  for (; i < n; ++i) to[i] = std::max(to[i], by[i]);
}

// An access or release point: slot `slot` (cluster * slots_per_cluster + slot in the cluster)
// at its clock `clock`. Clock 0 means none.
struct Epoch {
  uint32_t slot = 0;
  uint32_t clock = 0;
};

struct Clock {
  // The running cluster's slots; the async slots past the threads are added on first use, so
  // that kernels without async copies join half as much at every barrier.
  std::vector<uint32_t> local;
  std::map<uint32_t, std::vector<uint32_t>> remote;  // earlier clusters, by sequence number
  // How often it learned something: every change but the owner's own ticks, which write
  // `local` directly (a barrier's release uses it to see that a waiter learned nothing since
  // it arrived).
  uint64_t changes = 0;

  void join(const Clock& other) {
    ++changes;
    join_into(local, other.local);
    for (const auto& [cluster, v] : other.remote) join_into(remote[cluster], v);
  }
  uint32_t get(uint32_t index) const { return index < local.size() ? local[index] : 0; }
  uint32_t& at(uint32_t index) {
    ++changes;
    if (index >= local.size()) local.resize(index + 1, 0);
    return local[index];
  }
  void clear() {
    ++changes;
    std::fill(local.begin(), local.end(), 0);
    remote.clear();
  }
};

// A synchronization location's clock (an atomic or flag word): what its releases published,
// by cluster, so that it survives from one cluster to the next; kept apart by the releasing
// CTA and the release's scope, since an acquire takes only the releases whose scope includes
// it and that its own scope includes (race_scope.h).
struct LocationClock {
  struct Release {
    ScopeSite site;
    Scope scope = Scope::Gpu;
    std::map<uint32_t, std::vector<uint32_t>> by_cluster;
  };
  std::vector<Release> releases;  // one per (CTA, scope)

  void release(const Clock& c, uint32_t cluster, ScopeSite site = {}, Scope scope = Scope::Gpu) {
    site.cluster = cluster;
    Release* r = nullptr;
    for (Release& each : releases) {
      if (each.site.cta == site.cta && each.site.cluster == site.cluster && each.scope == scope)
        r = &each;
    }
    if (r == nullptr) r = &releases.emplace_back(Release{site, scope, {}});
    join_into(r->by_cluster[cluster], c.local);
    for (const auto& [other, v] : c.remote) join_into(r->by_cluster[other], v);
  }
  // False when a release was left out because a scope was too narrow.
  bool acquire_into(Clock& c, uint32_t cluster, ScopeSite site = {},
                    Scope scope = Scope::Gpu) const {
    site.cluster = cluster;
    ++c.changes;
    bool complete = true;
    for (const Release& r : releases) {
      if (!includes(scope, site, r.site) || !includes(r.scope, r.site, site)) {
        complete = false;
        continue;
      }
      for (const auto& [other, v] : r.by_cluster) {
        if (other == cluster) {
          join_into(c.local, v);
        } else {
          join_into(c.remote[other], v);
        }
      }
    }
    return complete;
  }
};

// Whether `e` happened before the holder of `c`, which runs in cluster `cluster`.
inline bool ordered(const Epoch& e, const Clock& c, uint32_t cluster, uint32_t slots) {
  uint32_t owner = e.slot / slots, index = e.slot % slots;
  if (owner == cluster) return index < c.local.size() && c.local[index] >= e.clock;
  auto it = c.remote.find(owner);
  return it != c.remote.end() && index < it->second.size() && it->second[index] >= e.clock;
}

}  // namespace kiln::check::race
