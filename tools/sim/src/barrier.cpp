#include "barrier.h"

namespace kiln::sim {

bool try_release_barrier(Cta& cta, uint32_t id) {
  NamedBarrier& b = cta.barriers[id];
  if (b.arrived == 0) return false;
  uint32_t expected = b.expected != 0 ? b.expected : cta.live_threads;
  if (b.arrived < expected) return false;
  for (uint32_t w : b.waiting) {
    if (cta.warps[w].state == WarpState::AtBarrier) cta.warps[w].state = WarpState::Ready;
  }
  b.waiting.clear();
  b.arrived = 0;
  b.expected = 0;
  return true;
}

void release_completed_barriers(Cta& cta) {
  for (uint32_t id = 0; id < cta.barriers.size(); ++id) try_release_barrier(cta, id);
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
