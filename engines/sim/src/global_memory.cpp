#include "global_memory.h"

#include <cstring>
#include <sstream>

#include "address_space.h"

namespace kiln::sim {

namespace {
std::string hex(uint64_t value) {
  std::ostringstream out;
  out << "0x" << std::hex << value;
  return out.str();
}
}  // namespace

Result<uint64_t> GlobalMemory::allocate(uint64_t bytes, std::string label) {
  if (bytes > capacity_ - used_) {
    return make_error("out of simulated device memory: " + std::to_string(bytes) +
                      " bytes requested, " + std::to_string(capacity_ - used_) +
                      " left; free buffers or use smaller simulation shapes");
  }
  uint64_t rounded = (bytes + kGlobalAlignment - 1) / kGlobalAlignment * kGlobalAlignment;
  // A gap of one alignment unit between allocations, so running off the end of one buffer
  // never lands silently in the next.
  uint64_t base = kGlobalBase + next_;
  next_ += rounded + kGlobalAlignment;
  Allocation a;
  a.base = base;
  a.size = bytes;
  a.bytes = std::make_unique<uint8_t[]>(bytes == 0 ? 1 : bytes);
  std::memset(a.bytes.get(), 0, bytes == 0 ? 1 : bytes);
  a.label = std::move(label);
  used_ += bytes;
  allocations_.emplace(base, std::move(a));
  return base;
}

Status GlobalMemory::free(uint64_t address) {
  auto it = allocations_.find(address);
  if (it == allocations_.end()) {
    return make_error("free of " + hex(address) +
                      ", which is not the start of a live allocation; pass the pointer that "
                      "cudaMalloc returned, once");
  }
  used_ -= it->second.size;
  allocations_.erase(it);
  return Ok{};
}

const Allocation* GlobalMemory::find(uint64_t address, uint64_t bytes) const {
  auto it = allocations_.upper_bound(address);
  if (it == allocations_.begin()) return nullptr;
  --it;
  const Allocation& a = it->second;
  if (address - a.base > a.size || bytes > a.size - (address - a.base)) return nullptr;
  return &a;
}

uint8_t* GlobalMemory::bytes(uint64_t address, uint64_t bytes) const {
  const Allocation* a = find(address, bytes);
  return a == nullptr ? nullptr : a->bytes.get() + (address - a->base);
}

std::string GlobalMemory::describe_miss(uint64_t address, uint64_t bytes) const {
  std::string text = std::to_string(bytes) + " bytes at " + hex(address);
  auto it = allocations_.upper_bound(address);
  if (it != allocations_.begin()) {
    const Allocation& a = std::prev(it)->second;
    if (address >= a.base && address - a.base < a.size + kGlobalAlignment) {
      return text + " run past the end of a " + std::to_string(a.size) + "-byte " + a.label +
             " buffer at " + hex(a.base) + " (offset " + std::to_string(address - a.base) + ")";
    }
  }
  if (it != allocations_.end() && it->second.base - address < kGlobalAlignment) {
    return text + " lie just before a " + std::to_string(it->second.size) + "-byte " +
           it->second.label + " buffer at " + hex(it->second.base);
  }
  return text + " are in no live allocation";
}

}  // namespace kiln::sim
