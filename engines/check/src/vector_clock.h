// Vector clocks for the dynamic race detector. The simulator runs one cluster of CTAs at a time,
// so a clock keeps a dense vector over the running cluster's slots (its threads, then one async
// proxy slot per thread) and, for the rare knowledge of earlier clusters (through atomics and
// flags in global memory), sparse vectors by cluster sequence number.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

namespace kiln::check::race {

inline void join_into(std::vector<uint32_t>& into, const std::vector<uint32_t>& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
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

  void join(const Clock& other) {
    join_into(local, other.local);
    for (const auto& [cluster, v] : other.remote) join_into(remote[cluster], v);
  }
  uint32_t get(uint32_t index) const { return index < local.size() ? local[index] : 0; }
  uint32_t& at(uint32_t index) {
    if (index >= local.size()) local.resize(index + 1, 0);
    return local[index];
  }
  void clear() {
    std::fill(local.begin(), local.end(), 0);
    remote.clear();
  }
};

// A synchronization location's clock (an atomic or flag word): what its releases published,
// by cluster, so that it survives from one cluster to the next.
struct LocationClock {
  std::map<uint32_t, std::vector<uint32_t>> by_cluster;

  void release(const Clock& c, uint32_t cluster) {
    join_into(by_cluster[cluster], c.local);
    for (const auto& [other, v] : c.remote) join_into(by_cluster[other], v);
  }
  void acquire_into(Clock& c, uint32_t cluster) const {
    for (const auto& [other, v] : by_cluster) {
      if (other == cluster) {
        join_into(c.local, v);
      } else {
        join_into(c.remote[other], v);
      }
    }
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
