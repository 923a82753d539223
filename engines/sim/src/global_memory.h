// The simulated device's global memory: live allocations, each 256-byte aligned, looked up by
// address with bounds checks. Module .global and .const variables are allocations too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "kiln/base/result.h"

namespace kiln::sim {

struct Allocation {
  uint64_t base = 0;
  uint64_t size = 0;
  std::unique_ptr<uint8_t[]> bytes;
  std::string label;  // "cudaMalloc" or "module variable NAME"
};

class GlobalMemory {
 public:
  explicit GlobalMemory(uint64_t capacity) : capacity_(capacity) {}

  Result<uint64_t> allocate(uint64_t bytes, std::string label);
  Status free(uint64_t address);
  // The allocation holding [address, address + bytes), or nullptr.
  const Allocation* find(uint64_t address, uint64_t bytes) const;
  // Host pointer to [address, address + bytes) inside one allocation, or nullptr.
  uint8_t* bytes(uint64_t address, uint64_t bytes) const;
  // "no allocation holds ...; the nearest is ..." for fault messages.
  std::string describe_miss(uint64_t address, uint64_t bytes) const;
  uint64_t used() const { return used_; }

 private:
  uint64_t capacity_;
  uint64_t used_ = 0;
  uint64_t next_ = 0;  // offset above kGlobalBase for the next allocation
  std::map<uint64_t, Allocation> allocations_;
};

}  // namespace kiln::sim
