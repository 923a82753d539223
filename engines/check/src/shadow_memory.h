// Shadow memory of the dynamic race detector: per byte of shared and global memory, the last
// write and up to two reads not ordered with each other (FastTrack's epochs; a third concurrent
// read replaces the newer one, so a WAR against it can be missed, never invented).
//
// Most accesses are whole aligned 4-byte words (or vectors of them) read and written together,
// so a word whose four cells are equal is kept as one: its flag in `whole` is set and only its
// first byte's cell is current, the other three are stale until an access to part of the word
// splits it (race_access.cpp). The answers are those of the per-byte cells; only the work is less.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "vector_clock.h"

namespace kiln::check::race {

enum : uint8_t {
  kStrong = 1,  // atomic, or ld/st .relaxed/.volatile/.acquire/.release: never a data race
                // against another strong access
  kAsync = 2,   // done asynchronously for the thread (cp.async, TMA, wgmma)
  kAtomic = 4,
  kProxy = 8,   // by the async proxy (TMA, wgmma): generic writes reach it through a proxy fence
  kWgmma = 16,  // wgmma.mma_async's operand reads
};

struct Access {
  Epoch epoch;  // clock 0: none
  uint32_t pc = 0;
  uint32_t flags = 0;  // a full word, so that cells have no padding and compare with memcmp
};

struct Cell {
  Access write;
  Access reads[2];
};

constexpr uint32_t kWord = 4;  // bytes per granule

// The cells of an access and the flags of the words they lie in: cells[i] is the byte at
// address + i, whole[j] the flag of the j-th word from the one holding `address`.
struct ShadowSpan {
  Cell* cells = nullptr;
  uint8_t* whole = nullptr;
};

// Shared memory of the CTAs of the running cluster: cells by rank and offset, cleared for the
// next cluster only as far as they were used.
class SharedShadow {
 public:
  void reset(uint32_t ranks, uint32_t bytes) {
    if (cells_.size() != ranks || bytes_ != bytes) {
      cells_.assign(ranks, {});
      whole_.assign(ranks, {});
      used_.assign(ranks, 0);
      bytes_ = bytes;
      return;
    }
    for (uint32_t r = 0; r < ranks; ++r) {
      if (used_[r] != 0) {
        std::memset(static_cast<void*>(cells_[r].data()), 0, used_[r] * sizeof(Cell));
        std::memset(whole_[r].data(), 1, (used_[r] + kWord - 1) / kWord);
      }
      used_[r] = 0;
    }
  }
  // The span of [offset, offset + bytes), or no cells outside the CTA's shared memory.
  ShadowSpan span(uint32_t rank, uint64_t offset, uint32_t bytes) {
    if (rank >= cells_.size() || offset + bytes > bytes_) return {};
    std::vector<Cell>& c = cells_[rank];
    if (c.empty()) {
      c.resize((bytes_ + kWord - 1) / kWord * kWord);  // whole words, for split()
      whole_[rank].assign((bytes_ + kWord - 1) / kWord, 1);
    }
    used_[rank] = std::max<uint64_t>(used_[rank], offset + bytes);
    return {c.data() + offset, whole_[rank].data() + offset / kWord};
  }

 private:
  std::vector<std::vector<Cell>> cells_;
  std::vector<std::vector<uint8_t>> whole_;
  std::vector<uint64_t> used_;
  uint64_t bytes_ = 0;
};

// Global memory, in pages allocated on first touch.
class GlobalShadow {
 public:
  static constexpr uint64_t kPage = 4096;

  void reset() {
    pages_.clear();
    last_page_ = UINT64_MAX;
    last_ = nullptr;
  }
  // The span from `address` to the end of its page at most.
  ShadowSpan span(uint64_t address) {
    uint64_t page = address / kPage;
    if (page != last_page_) {
      Page& p = pages_[page];
      if (!p.cells) {
        p.cells = std::make_unique<Cell[]>(kPage);
        p.whole = std::make_unique<uint8_t[]>(kPage / kWord);
        std::memset(p.whole.get(), 1, kPage / kWord);
      }
      last_page_ = page;
      last_ = &p;
    }
    const uint64_t at = address % kPage;
    return {last_->cells.get() + at, last_->whole.get() + at / kWord};
  }

 private:
  struct Page {
    std::unique_ptr<Cell[]> cells;
    std::unique_ptr<uint8_t[]> whole;
  };
  std::unordered_map<uint64_t, Page> pages_;
  uint64_t last_page_ = UINT64_MAX;
  Page* last_ = nullptr;
};

}  // namespace kiln::check::race
