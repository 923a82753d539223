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

uint64_t GlobalMemory::reserve(uint64_t bytes) {
  uint64_t rounded = (bytes + kGlobalAlignment - 1) / kGlobalAlignment * kGlobalAlignment;
  // A gap of one alignment unit between allocations, so running off the end of one buffer
  // never lands silently in the next.
  uint64_t base = kGlobalBase + next_;
  next_ += rounded + kGlobalAlignment;
  return base;
}

Result<uint64_t> GlobalMemory::allocate(uint64_t bytes, std::string label) {
  if (bytes > capacity_ - used_) {
    return make_error("out of simulated device memory: " + std::to_string(bytes) +
                      " bytes requested, " + std::to_string(capacity_ - used_) +
                      " left; free buffers or use smaller simulation shapes");
  }
  Allocation a;
  a.base = reserve(bytes);
  a.size = bytes;
  const uint64_t stored = bytes == 0 ? 1 : bytes;
  a.bytes = Allocation::Bytes(new uint8_t[stored](), [](uint8_t* p) { delete[] p; });
  a.label = std::move(label);
  used_ += bytes;
  const uint64_t base = a.base;
  allocations_.emplace(base, std::move(a));
  return base;
}

Result<uint64_t> GlobalMemory::map_external(ExternalBytes external, std::string label) {
  if (external.data == nullptr || external.size == 0) {
    if (external.release) external.release();
    return make_error("cannot map " + label + ": it has no bytes");
  }
  Allocation a;
  a.base = reserve(external.size);
  a.size = external.size;
  a.bytes = Allocation::Bytes(external.data, [release = std::move(external.release)](uint8_t*) {
    if (release) release();
  });
  a.label = std::move(label);
  a.counted = false;
  const uint64_t base = a.base;
  allocations_.emplace(base, std::move(a));
  return base;
}

Status GlobalMemory::move_to_external(uint64_t address, ExternalBytes external) {
  auto it = allocations_.find(address);
  if (it == allocations_.end() || it->second.size != external.size || external.data == nullptr) {
    if (external.release) external.release();
    return make_error("cannot move " + hex(address) +
                      " to external memory: it is not the start of a live allocation of " +
                      std::to_string(external.size) + " bytes");
  }
  Allocation& a = it->second;
  std::memcpy(external.data, a.bytes.get(), a.size);
  a.bytes = Allocation::Bytes(external.data, [release = std::move(external.release)](uint8_t*) {
    if (release) release();
  });
  return Ok{};
}

Status GlobalMemory::free(uint64_t address) {
  auto it = allocations_.find(address);
  if (it == allocations_.end()) {
    return make_error("free of " + hex(address) +
                      ", which is not the start of a live allocation; pass the pointer that "
                      "cudaMalloc returned, once");
  }
  if (it->second.counted) used_ -= it->second.size;
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
