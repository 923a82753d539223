#include "barrier.h"

namespace kiln::sim {

bool try_release_barrier(Cta& cta, uint32_t id) {
  NamedBarrier& b = cta.barriers[id];
  if (b.arrived == 0) return false;
  uint32_t expected = b.expected != 0 ? b.expected : cta.live_threads;
  if (b.arrived < expected) return false;
  if (cta.observer != nullptr) [[unlikely]] {
    SyncEvent e;
    e.kind = SyncKind::BarrierRelease;
    e.cta = cta.rank;
    e.id = id;
    e.count = b.arrived;
    e.expected = b.expected;
    cta.observer->sync(e);
  }
  for (uint32_t w : b.waiting) {
    if (cta.warps[w].state == WarpState::AtBarrier) cta.warps[w].state = WarpState::Ready;
  }
  for (const BarrierReduction& r : b.reductions) {
    Warp& warp = cta.warps[r.warp];
    if (r.mode == 1) {
      uint64_t* d = warp.regs + static_cast<size_t>(r.destination) * 32;
      for (uint32_t lane = 0; lane < 32; ++lane) {
        if ((r.mask >> lane) & 1) d[lane] = b.red_popc;
      }
    } else {
      bool value = r.mode == 2 ? b.red_and : b.red_or;
      uint32_t& p = warp.preds[r.destination];
      p = (p & ~r.mask) | (value ? r.mask : 0);
    }
  }
  b.waiting.clear();
  b.reductions.clear();
  b.arrived = 0;
  b.expected = 0;
  b.red_popc = 0;
  b.red_and = true;
  b.red_or = false;
  return true;
}

void release_completed_barriers(Cta& cta) {
  for (uint32_t id = 0; id < cta.barriers.size(); ++id) try_release_barrier(cta, id);
}

bool try_release_cluster_barrier(Exec& x) {
  ClusterBarrier& b = *x.cluster_barrier;
  if (b.arrived == 0) return false;
  uint32_t expected = 0;
  for (const Cta* cta : x.cluster_ctas) expected += cta->live_threads;
  if (b.arrived < expected) return false;
  if (x.observer != nullptr) [[unlikely]] {
    SyncEvent e;
    e.kind = SyncKind::BarrierRelease;
    e.id = 16;
    e.count = b.arrived;
    x.observer->sync(e);
  }
  for (const auto& [rank, warp] : b.waiting) {
    Warp& w = x.cluster_ctas[rank]->warps[warp];
    if (w.state == WarpState::AtBarrier) w.state = WarpState::Ready;
  }
  b = ClusterBarrier{};
  return true;
}

std::string describe_cluster_waiting(const Exec& x) {
  const ClusterBarrier& b = *x.cluster_barrier;
  if (b.waiting.empty()) return "";
  uint32_t expected = 0;
  for (const Cta* cta : x.cluster_ctas) expected += cta->live_threads;
  return std::to_string(b.waiting.size()) + " warp(s) wait at barrier.cluster (" +
         std::to_string(b.arrived) + " of " + std::to_string(expected) +
         " threads of the cluster arrived)";
}

std::string describe_waiting(const Cta& cta) {
  std::string text;
  for (uint32_t id = 0; id < cta.barriers.size(); ++id) {
    const NamedBarrier& b = cta.barriers[id];
    if (b.waiting.empty()) continue;
    if (!text.empty()) text += "; ";
    text += "warp";
    text += b.waiting.size() > 1 ? "s " : " ";
    for (size_t i = 0; i < b.waiting.size(); ++i) {
      text += (i ? ", " : "") + std::to_string(b.waiting[i]);
    }
    uint32_t expected = b.expected != 0 ? b.expected : cta.live_threads;
    text += " wait at barrier " + std::to_string(id) + " (" + std::to_string(b.arrived) + " of " +
            std::to_string(expected) + " threads arrived)";
  }
  return text;
}

}  // namespace kiln::sim
