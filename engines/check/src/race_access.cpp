// RaceDetector's memory side: every byte an access touches is checked against the last write
// and the unordered reads its shadow cell keeps (FastTrack), then the cell is updated. Strong
// accesses (atomics, relaxed/volatile/acquire/release ld/st) never race with each other and
// are where releases and acquires through memory happen.
#include <algorithm>
#include <cstring>

#include "race_detector_impl.h"

namespace kiln::check {

using race::Access;
using race::Cell;
using race::Hazard;
using sim::AccessKind;
using sim::Ordering;

namespace {

bool conflicts(const Access& before, const Access& now) {
  return !((before.flags & race::kStrong) && (now.flags & race::kStrong));
}

// A sync location: the space, the owning CTA (shared) and the address.
uint64_t location_key(bool shared, uint32_t owner, uint64_t address) {
  return shared ? (1ull << 63) | (static_cast<uint64_t>(owner) << 40) | address : address;
}

}  // namespace

void RaceDetector::Impl::check_bytes(Cell* cells, uint32_t bytes, const Access& now,
                                     const race::Clock& knows, AccessKind kind, bool is_shared,
                                     uint64_t address) {
  bool writes = kind != AccessKind::Read;
  bool reported = false;  // one report per access and hazard is enough
  auto found = [&](Hazard h, uint32_t i, const Access& before) {
    if (reported) return;
    reported = true;
    report({h, is_shared, address + i, bytes, before, now});
  };
  Cell first_before{};  // the first byte's cell as it was: bytes that match it share its update
  for (uint32_t i = 0; i < bytes; ++i) {
    Cell& c = cells[i];
    if (i == 0) {
      first_before = c;
    } else if (std::memcmp(&c, &first_before, sizeof(Cell)) == 0) {
      c = cells[0];  // most accesses are whole words written and read together
      continue;
    }
    const Access& w = c.write;
    if (w.epoch.clock != 0 && w.epoch.slot != now.epoch.slot && conflicts(w, now)) {
      if (!ordered(w.epoch, knows)) {
        found(writes ? Hazard::Waw : Hazard::Raw, i, w);
      } else if (!writes && (now.flags & race::kProxy) && !(w.flags & race::kAsync) &&
                 !proxy_fenced(w, knows) && !reported) {
        // Ordered, but the async proxy may still see the bytes from before the write.
        reported = true;
        race::RawRace r{Hazard::Raw, is_shared, address + i, bytes, w, now};
        r.cause = "missing_proxy_fence";
        report(r);
      }
    }
    if (writes) {
      for (Access& r : c.reads) {
        if (r.epoch.clock != 0 && r.epoch.slot != now.epoch.slot && conflicts(r, now) &&
            !ordered(r.epoch, knows)) {
          found(Hazard::War, i, r);
        }
        r.epoch.clock = 0;
      }
      c.write = now;
      continue;
    }
    // A read: keep it beside the reads it is not ordered with.
    Access* slot = nullptr;
    for (Access& r : c.reads) {
      if (r.epoch.clock == 0 || r.epoch.slot == now.epoch.slot || ordered(r.epoch, knows)) {
        slot = &r;
        break;
      }
    }
    if (slot == nullptr) {
      ++evicted;
      slot = &c.reads[1];
    }
    *slot = now;
  }
}

// A generic write the async proxy reads is visible to it when the writer ran a proxy fence
// after the write that the reader's issuing thread knows of (a barrier or mbarrier after the
// fence). Writes from earlier clusters are taken as fenced (kernel boundaries and cluster
// barriers are where such writes meet TMA loads).
bool RaceDetector::Impl::proxy_fenced(const Access& write, const race::Clock& knows) const {
  uint32_t local = write.epoch.slot - base;
  if (local >= threads) return true;
  const std::vector<uint32_t>& fences = thread_state[local].proxy_fences;
  auto it = std::lower_bound(fences.begin(), fences.end(), write.epoch.clock);
  return it != fences.end() && knows.get(local) >= *it;
}

// wgmma.mma_async's operand pieces: read by the warp's wgmma slot, with what lane 0 knows (the
// whole warp issues it converged).
void RaceDetector::Impl::wgmma_access(const sim::AccessEvent& e) {
  uint32_t index = thread_index(e.cta, e.warp, 0), warp = e.cta * cta_warps + e.warp;
  if (index >= threads || warp >= warp_state.size()) return;
  const race::Clock& knows = thread_state[index].clock;
  Access now;
  now.pc = e.pc;
  now.flags = race::kAsync | race::kProxy | race::kWgmma;
  now.epoch = {base + wgmma_slot(e.cta, e.warp), warp_state[warp].clock};
  for (uint32_t m = e.mask; m != 0; m &= m - 1) {
    uint32_t piece = static_cast<uint32_t>(__builtin_ctz(m));
    Cell* cells = shared.cells(e.owner[piece], e.address[piece], e.bytes);
    if (cells != nullptr) {
      check_bytes(cells, e.bytes, now, knows, AccessKind::Read, true, e.address[piece]);
    }
  }
}

void RaceDetector::Impl::strong_access(const sim::AccessEvent& e, uint32_t lane, uint32_t index) {
  race::ThreadState& t = thread_state[index];
  bool is_shared = e.space == sim::ObservedSpace::Shared;
  uint64_t key = location_key(is_shared, is_shared ? e.owner[lane] : 0, e.address[lane]);
  Ordering o = e.ordering;
  if (o == Ordering::Relaxed) t.strong = true;
  bool reads = e.kind != AccessKind::Write, writes = e.kind != AccessKind::Read;
  const race::Scope scope = scope_at(e.pc);
  // Through a fence, a relaxed access synchronizes at the narrower of the two scopes.
  const race::Scope sync_scope = o != Ordering::Relaxed ? scope : std::min(scope, t.fence_scope);
  // A fence before a relaxed read-modify-write makes it acquire as well as release: the
  // classic "fence, atomicAdd a ticket, the last block reads everyone's results" pattern.
  bool acquire = o == Ordering::Acquire || o == Ordering::AcqRel ||
                 (o == Ordering::Relaxed && e.kind == AccessKind::Atomic && t.fenced);
  bool release =
      o == Ordering::Release || o == Ordering::AcqRel || (o == Ordering::Relaxed && t.fenced);
  if (reads) {
    if (acquire) {
      auto it = locations.find(key);
      if (it != locations.end() &&
          !it->second.acquire_into(t.clock, cluster, site_of(index), sync_scope))
        t.narrowed = true;
    } else if (o == Ordering::Relaxed && (t.pending.empty() || t.pending.back().key != key) &&
               t.pending.size() < 64) {
      t.pending.push_back({key, scope});
    }
  }
  if (writes && release) {
    locations[key].release(t.clock, cluster, site_of(index), sync_scope);
    ++t.clock.local[index];
  }
}

uint32_t RaceDetector::Impl::channel(uint32_t index, race::Completion completion,
                                     uint64_t mbarrier) {
  const uint64_t key = static_cast<uint64_t>(index) << 42 |
                       static_cast<uint64_t>(completion) << 40 | (mbarrier & ((1ull << 40) - 1));
  auto it = channels.find(key);
  if (it != channels.end()) return it->second;
  if (channel_owner.size() >= kChannels) return threads + index;  // out of channels
  const uint32_t slot = pool_base + static_cast<uint32_t>(channel_owner.size());
  channel_owner.push_back(index);
  channel_clock.push_back(1);
  channels.emplace(key, slot);
  return slot;
}

uint32_t& RaceDetector::Impl::async_epoch(uint32_t slot, race::ThreadState& t) {
  uint32_t& epoch = slot >= pool_base ? channel_clock[slot - pool_base] : t.async_clock;
  // Past what the thread already waited for.
  epoch = std::max(epoch, t.clock.get(slot) + 1);
  return epoch;
}

void RaceDetector::Impl::run_deferred(uint32_t index, race::Completion completion,
                                      uint64_t mbarrier) {
  size_t kept = 0;
  for (size_t i = 0; i < deferred.size(); ++i) {
    race::DeferredAccess& d = deferred[i];
    const uint32_t thread = thread_index(d.event.cta, d.event.warp, d.lane);
    if (index != UINT32_MAX && thread != index) {
      deferred[kept++] = d;
      continue;
    }
    if (thread >= threads) continue;
    const uint32_t slot = channel(thread, completion, mbarrier);
    access_lane(d.event, d.lane, d.address, d.owner, slot);
    race::ThreadState& t = thread_state[thread];
    t.tma_slot = slot;
    t.tma_epoch = async_epoch(slot, t);
    t.tma_pc = d.event.pc;
  }
  deferred.resize(kept);
}

void RaceDetector::Impl::access_lane(const sim::AccessEvent& e, uint32_t lane, uint64_t address,
                                     uint8_t owner, uint32_t async_slot) {
  uint32_t index = thread_index(e.cta, e.warp, lane);
  if (index >= threads) return;
  bool is_shared = e.space == sim::ObservedSpace::Shared;
  bool strong = e.kind == AccessKind::Atomic || e.ordering != Ordering::Weak;
  race::ThreadState& t = thread_state[index];
  Access now;
  now.pc = e.pc;
  now.flags = static_cast<uint8_t>((strong ? race::kStrong : 0) | (e.async ? race::kAsync : 0) |
                                   (e.kind == AccessKind::Atomic ? race::kAtomic : 0) |
                                   (e.async && e.proxy ? race::kProxy : 0));
  if (e.async) {
    // The copy runs beside the thread: an epoch of its async slot (or channel) that the
    // thread has not yet waited for.
    now.epoch = {base + async_slot, async_epoch(async_slot, t)};
  } else {
    now.epoch = {base + index, t.clock.local[index]};
  }
  if (is_shared) {
    Cell* cells = shared.cells(owner, address, e.bytes);
    if (cells != nullptr) check_bytes(cells, e.bytes, now, t.clock, e.kind, true, address);
  } else {
    for (uint32_t done = 0; done < e.bytes;) {
      // Cells of one shadow page at a time.
      uint64_t at = address + done;
      uint32_t in_page = static_cast<uint32_t>(std::min<uint64_t>(
          e.bytes - done, race::GlobalShadow::kPage - at % race::GlobalShadow::kPage));
      check_bytes(global.cell(at), in_page, now, t.clock, e.kind, false, at);
      done += in_page;
    }
  }
  if (strong && !e.async) strong_access(e, lane, index);
}

void RaceDetector::Impl::access(const sim::AccessEvent& e) {
  if (e.wgmma) {
    if (!deferred.empty()) run_deferred(UINT32_MAX, race::Completion::Bulk, 0);
    wgmma_access(e);
    return;
  }
  const bool tma = e.async && e.proxy;
  if (!tma && !deferred.empty()) run_deferred(UINT32_MAX, race::Completion::Bulk, 0);
  for (uint32_t m = e.mask; m != 0; m &= m - 1) {
    uint32_t lane = static_cast<uint32_t>(__builtin_ctz(m));
    uint8_t owner = e.owner != nullptr ? e.owner[lane] : 0;
    if (tma) {
      // Which slot it takes depends on what completes it, which the next event says.
      race::DeferredAccess d{e, lane, e.address[lane], owner};
      d.event.address = nullptr;
      d.event.owner = nullptr;
      deferred.push_back(d);
      continue;
    }
    access_lane(e, lane, e.address[lane], owner, threads + thread_index(e.cta, e.warp, lane));
  }
}

}  // namespace kiln::check
