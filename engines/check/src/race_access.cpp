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

namespace {

bool same_cell(const Cell& a, const Cell& b) { return std::memcmp(&a, &b, sizeof(Cell)) == 0; }

}  // namespace

// One access's checks over its cells: each cell is checked against `now` and updated; a cell
// of a whole word stands for its four bytes. At most one report per access and hazard.
struct RaceDetector::Impl::SpanCheck {
  Impl& d;
  const Access& now;
  const race::Clock* knows;  // the accessing thread's clock
  bool writes;
  bool is_shared;
  uint64_t address;  // of the access
  uint32_t bytes;
  bool reported = false;

  void found(Hazard h, uint64_t at, const Access& before, const char* cause = nullptr) {
    if (reported) return;
    reported = true;
    race::RawRace r{h, is_shared, at, bytes, before, now};
    r.cause = cause;
    d.report(r);
  }

  // The cell of the byte at `at` (and of its word's other bytes when the word is whole). Inlined
  // into the whole-word path, which is most accesses.
  [[gnu::always_inline]] void cell(Cell& c, uint64_t at) {
    const Access& w = c.write;
    if (w.epoch.clock != 0 && w.epoch.slot != now.epoch.slot && conflicts(w, now)) {
      if (!d.ordered(w.epoch, *knows)) {
        found(writes ? Hazard::Waw : Hazard::Raw, at, w);
      } else if (!writes && (now.flags & race::kProxy) && !(w.flags & race::kAsync) &&
                 !d.proxy_fenced(w, *knows)) {
        // Ordered, but the async proxy may still see the bytes from before the write.
        found(Hazard::Raw, at, w, "missing_proxy_fence");
      }
    }
    if (writes) {
      for (Access& r : c.reads) {
        if (r.epoch.clock != 0 && r.epoch.slot != now.epoch.slot && conflicts(r, now) &&
            !d.ordered(r.epoch, *knows)) {
          found(Hazard::War, at, r);
        }
        r.epoch.clock = 0;
      }
      c.write = now;
      return;
    }
    // A read: keep it beside the reads it is not ordered with.
    auto replaceable = [&](const Access& r) {
      return r.epoch.clock == 0 || r.epoch.slot == now.epoch.slot || d.ordered(r.epoch, *knows);
    };
    if (replaceable(c.reads[0])) {
      c.reads[0] = now;
      return;
    }
    if (!replaceable(c.reads[1])) ++d.evicted;
    c.reads[1] = now;
  }

  // Bytes [from, to) of the access, one cell each: bytes whose cell equals the first one's as it
  // was share its update (a split word's bytes are often still alike).
  void each_byte(Cell* cells, uint32_t from, uint32_t to) {
    const Cell first_before = cells[from];
    cell(cells[from], address + from);
    for (uint32_t i = from + 1; i < to; ++i) {
      if (same_cell(cells[i], first_before)) {
        cells[i] = cells[from];
      } else {
        cell(cells[i], address + i);
      }
    }
  }

  // A whole word's stale cells take its first byte's: the word is about to be accessed in part.
  static void split(Cell* word, uint8_t& whole) {
    if (!whole) return;
    for (uint32_t b = 1; b < race::kWord; ++b) word[b] = word[0];
    whole = 0;
  }

  [[gnu::always_inline]] void run(race::ShadowSpan span) {
    if (bytes == race::kWord && address % race::kWord == 0 && span.whole[0]) {
      cell(span.cells[0], address);  // one whole word: the common case
      return;
    }
    run_parts(span);
  }

  [[gnu::noinline]] void run_parts(race::ShadowSpan span) {
    const uint32_t lead = static_cast<uint32_t>(address % race::kWord);
    uint32_t i = 0;
    if (lead != 0) {  // the bytes before the first word boundary
      split(span.cells - lead, span.whole[0]);
      i = std::min(bytes, race::kWord - lead);
      each_byte(span.cells, 0, i);
    }
    for (; i + race::kWord <= bytes; i += race::kWord) {
      uint8_t& whole = span.whole[(lead + i) / race::kWord];
      Cell* word = span.cells + i;
      if (whole) {
        cell(word[0], address + i);
        continue;
      }
      each_byte(word, 0, race::kWord);
      whole =
          same_cell(word[0], word[1]) && same_cell(word[0], word[2]) && same_cell(word[0], word[3]);
    }
    if (i < bytes) {  // the bytes after the last word boundary
      split(span.cells + i, span.whole[(lead + i) / race::kWord]);
      each_byte(span.cells, i, bytes);
    }
  }
};

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
    race::ShadowSpan span = shared.span(e.owner[piece], e.address[piece], e.bytes);
    if (span.cells != nullptr) {
      SpanCheck{*this, now, &knows, false, true, e.address[piece], e.bytes}.run(span);
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

[[gnu::always_inline]] inline void RaceDetector::Impl::access_lane(const sim::AccessEvent& e,
                                                                   uint32_t lane, uint64_t address,
                                                                   uint8_t owner,
                                                                   uint32_t async_slot) {
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
  const bool writes = e.kind != AccessKind::Read;
  if (is_shared) {
    race::ShadowSpan span = shared.span(owner, address, e.bytes);
    if (span.cells != nullptr)
      SpanCheck{*this, now, &t.clock, writes, true, address, e.bytes}.run(span);
  } else {
    for (uint32_t done = 0; done < e.bytes;) {
      // Cells of one shadow page at a time.
      uint64_t at = address + done;
      uint32_t in_page = static_cast<uint32_t>(std::min<uint64_t>(
          e.bytes - done, race::GlobalShadow::kPage - at % race::GlobalShadow::kPage));
      SpanCheck{*this, now, &t.clock, writes, false, at, in_page}.run(global.span(at));
      done += in_page;
    }
  }
  if (strong && !e.async) strong_access(e, lane, index);
}

// Plain loads and stores (weak, not atomic, not async), most of a kernel's accesses: what every
// lane shares is set up once, and a lane's aligned whole word is checked in place.
void RaceDetector::Impl::plain_access(const sim::AccessEvent& e) {
  const bool is_shared = e.space == sim::ObservedSpace::Shared;
  const bool writes = e.kind != AccessKind::Read;
  const bool word = e.bytes == race::kWord;
  Access now;
  now.pc = e.pc;
  now.flags = 0;
  SpanCheck check{*this, now, nullptr, writes, is_shared, 0, e.bytes};
  for (uint32_t m = e.mask; m != 0; m &= m - 1) {
    const uint32_t lane = static_cast<uint32_t>(__builtin_ctz(m));
    const uint32_t index = thread_index(e.cta, e.warp, lane);
    if (index >= threads) continue;
    const uint64_t address = e.address[lane];
    race::ThreadState& t = thread_state[index];
    now.epoch = {base + index, t.clock.local[index]};
    check.knows = &t.clock;
    check.address = address;
    check.reported = false;
    // An aligned word kept whole is one cell; anything else is checked byte cell by byte cell.
    const bool one_cell = word && address % race::kWord == 0;
    auto check_span = [&](const race::ShadowSpan& span) {
      if (one_cell && span.whole[0])
        check.cell(span.cells[0], address);
      else
        check.run_parts(span);
    };
    if (is_shared) {
      const race::ShadowSpan span =
          shared.span(e.owner != nullptr ? e.owner[lane] : 0, address, e.bytes);
      if (span.cells != nullptr) check_span(span);
      continue;
    }
    if (address % race::GlobalShadow::kPage + e.bytes <= race::GlobalShadow::kPage) {
      check_span(global.span(address));
      continue;
    }
    access_lane(e, lane, address, 0, threads + index);  // across two shadow pages
  }
}

void RaceDetector::Impl::access(const sim::AccessEvent& e) {
  if (e.wgmma) {
    if (!deferred.empty()) run_deferred(UINT32_MAX, race::Completion::Bulk, 0);
    wgmma_access(e);
    return;
  }
  const bool tma = e.async && e.proxy;
  if (!tma && !deferred.empty()) run_deferred(UINT32_MAX, race::Completion::Bulk, 0);
  if (!e.async && e.kind != AccessKind::Atomic && e.ordering == Ordering::Weak) {
    plain_access(e);
    return;
  }
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
