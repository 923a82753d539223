// Shadow memory of the dynamic race detector: per byte of shared and global memory, the last
// write and up to two reads not ordered with each other (FastTrack's epochs; a third concurrent
// read replaces the newer one, so a WAR against it can be missed, never invented).
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

// Shared memory of the CTAs of the running cluster: cells by rank and offset, cleared for the
// next cluster only as far as they were used.
class SharedShadow {
 public:
  void reset(uint32_t ranks, uint32_t bytes) {
    if (cells_.size() != ranks || bytes_ != bytes) {
      cells_.assign(ranks, {});
      used_.assign(ranks, 0);
      bytes_ = bytes;
      return;
    }
    for (uint32_t r = 0; r < ranks; ++r) {
      if (used_[r] != 0)
        std::memset(static_cast<void*>(cells_[r].data()), 0, used_[r] * sizeof(Cell));
      used_[r] = 0;
    }
  }
  // Cells for [offset, offset + bytes), or nullptr outside the CTA's shared memory.
  Cell* cells(uint32_t rank, uint64_t offset, uint32_t bytes) {
    if (rank >= cells_.size() || offset + bytes > bytes_) return nullptr;
    std::vector<Cell>& c = cells_[rank];
    if (c.empty()) c.resize(bytes_);
    used_[rank] = std::max<uint64_t>(used_[rank], offset + bytes);
    return c.data() + offset;
  }

 private:
  std::vector<std::vector<Cell>> cells_;
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
  Cell* cell(uint64_t address) {
    uint64_t page = address / kPage;
    if (page != last_page_) {
      std::unique_ptr<Cell[]>& p = pages_[page];
      if (!p) p = std::make_unique<Cell[]>(kPage);
      last_page_ = page;
      last_ = p.get();
    }
    return last_ + address % kPage;
  }

 private:
  std::unordered_map<uint64_t, std::unique_ptr<Cell[]>> pages_;
  uint64_t last_page_ = UINT64_MAX;
  Cell* last_ = nullptr;
};

}  // namespace kiln::check::race
