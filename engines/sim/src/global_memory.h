// The simulated device's global memory: live allocations, each 256-byte aligned, looked up by
// address with bounds checks. Module .global and .const variables are allocations too. An
// allocation's bytes are normally its own; they can also be external host memory (a CUDA IPC
// shared-memory mapping, mapped pinned host memory), reached through the same lookups.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "kiln/base/result.h"
#include "kiln/sim/device.h"

namespace kiln::sim {

struct Allocation {
  // Deleting the bytes frees what the allocation owns, or runs an external backing's release.
  using Bytes = std::unique_ptr<uint8_t[], std::function<void(uint8_t*)>>;
  uint64_t base = 0;
  uint64_t size = 0;
  Bytes bytes;
  std::string label;    // "cudaMalloc" or "module variable NAME"
  bool counted = true;  // counts against the capacity (not so for memory mapped from outside)
};

class GlobalMemory {
 public:
  explicit GlobalMemory(uint64_t capacity) : capacity_(capacity) {}

  Result<uint64_t> allocate(uint64_t bytes, std::string label);
  // A fresh address for `external`'s bytes, outside the capacity.
  Result<uint64_t> map_external(ExternalBytes external, std::string label);
  // Copies the allocation based at `address` into `external` (of the same size), which backs
  // it from then on; its own bytes are freed.
  Status move_to_external(uint64_t address, ExternalBytes external);
  Status free(uint64_t address);
  // The allocation holding [address, address + bytes), or nullptr.
  const Allocation* find(uint64_t address, uint64_t bytes) const;
  // Host pointer to [address, address + bytes) inside one allocation, or nullptr.
  uint8_t* bytes(uint64_t address, uint64_t bytes) const;
  // "no allocation holds ...; the nearest is ..." for fault messages.
  std::string describe_miss(uint64_t address, uint64_t bytes) const;
  uint64_t used() const { return used_; }

 private:
  // The base for a new allocation of `bytes`, leaving a guard gap after it.
  uint64_t reserve(uint64_t bytes);

  uint64_t capacity_;
  uint64_t used_ = 0;
  uint64_t next_ = 0;  // offset above kGlobalBase for the next allocation
  std::map<uint64_t, Allocation> allocations_;
};

}  // namespace kiln::sim
