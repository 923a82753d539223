#include "fake_device.h"

#include <cstring>
#include <map>
#include <regex>
#include <sstream>

#include "kiln/sim/tensor_map.h"

namespace kiln::sim {
namespace fake {
namespace {

std::vector<std::pair<std::string, KernelBody>>& bodies() {
  static std::vector<std::pair<std::string, KernelBody>> all;
  return all;
}

// Parameter layouts from the .entry headers of a PTX module.
std::map<std::string, KernelInfo> parse_entries(std::string_view ptx) {
  std::map<std::string, KernelInfo> kernels;
  std::istringstream in{std::string(ptx)};
  std::string line;
  KernelInfo* current = nullptr;
  const std::regex entry(R"(\.entry\s+([A-Za-z0-9_$]+)\s*\()");
  const std::regex param(
      R"(\.param\s+\.(\w+)(?:\s+\.ptr)?(?:\s+\.\w+)?(?:\s+\.align\s+(\d+))?(?:\s+\.(\w+))?\s+([A-Za-z0-9_$]+)(?:\[(\d+)\])?)");
  const std::regex maxntid(R"(\.maxntid\s+(\d+),\s*(\d+),\s*(\d+))");
  const std::regex cluster(R"(\.reqnctapercluster\s+(\d+),\s*(\d+),\s*(\d+))");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, entry)) {
      current = &kernels[m[1]];
      current->name = m[1];
      current->required_block = {0, 0, 0};
      continue;
    }
    if (current == nullptr) continue;
    if (std::regex_search(line, m, param)) {
      std::string type = m[1];
      uint32_t size = 0, align = 0;
      if (type == "align") {  // ".param .align 8 .b8 name[16]" parses with type "align"
        const std::regex aggregate(
            R"(\.param\s+\.align\s+(\d+)\s+\.b8\s+([A-Za-z0-9_$]+)\[(\d+)\])");
        std::smatch a;
        if (!std::regex_search(line, a, aggregate)) continue;
        align = static_cast<uint32_t>(std::stoul(a[1]));
        size = static_cast<uint32_t>(std::stoul(a[3]));
        ParamSlot slot{a[2], 0, size, align};
        slot.offset = (current->param_bytes + align - 1) / align * align;
        current->param_bytes = slot.offset + size;
        current->params.push_back(slot);
        continue;
      }
      const uint32_t bits = static_cast<uint32_t>(std::stoul(type.substr(1)));
      size = bits / 8;
      align = size;
      ParamSlot slot{m[4], 0, size, align};
      slot.offset = (current->param_bytes + align - 1) / align * align;
      current->param_bytes = slot.offset + size;
      current->params.push_back(slot);
      continue;
    }
    if (std::regex_search(line, m, maxntid))
      current->max_threads =
          static_cast<uint32_t>(std::stoul(m[1]) * std::stoul(m[2]) * std::stoul(m[3]));
    if (std::regex_search(line, m, cluster))
      current->cluster =
          Dim3{static_cast<uint32_t>(std::stoul(m[1])), static_cast<uint32_t>(std::stoul(m[2])),
               static_cast<uint32_t>(std::stoul(m[3]))};
    if (line.find('{') != std::string::npos) current = nullptr;
  }
  return kernels;
}

}  // namespace

std::vector<RecordedLaunch>& recorded_launches() {
  static std::vector<RecordedLaunch> launches;
  return launches;
}

void set_kernel_body(const std::string& kernel_substring, KernelBody body) {
  bodies().emplace_back(kernel_substring, std::move(body));
}

void clear_kernel_bodies() { bodies().clear(); }

}  // namespace fake

// One allocation of the fake: its own bytes, or external ones (released when it ends).
struct FakeRegion {
  std::vector<std::byte> owned;
  std::byte* data = nullptr;
  size_t size = 0;
  std::function<void()> release;
  FakeRegion() = default;
  FakeRegion(const FakeRegion&) = delete;
  FakeRegion& operator=(const FakeRegion&) = delete;
  ~FakeRegion() {
    if (release) release();
  }
};

struct Device::Impl {
  DeviceProperties properties;
  std::map<uint64_t, FakeRegion> memory;  // base -> bytes
  uint64_t next = 0x10000000000ull;
  std::vector<std::map<std::string, KernelInfo>> modules;
  std::map<std::pair<ModuleHandle, std::string>, uint64_t> symbols;

  std::byte* at(uint64_t address, size_t bytes) {
    auto it = memory.upper_bound(address);
    if (it == memory.begin()) return nullptr;
    --it;
    if (address - it->first + bytes > it->second.size) return nullptr;
    return it->second.data + (address - it->first);
  }

  uint64_t add_owned(size_t bytes) {
    const uint64_t base = next;
    FakeRegion& region = memory.try_emplace(base).first->second;
    region.owned.resize(bytes);
    region.data = region.owned.data();
    region.size = bytes;
    next += (bytes + 255) / 256 * 256 + 256;
    return base;
  }
};

Device::Device(SimulatorOptions /*options*/, DeviceProperties properties)
    : impl_(std::make_unique<Impl>()) {
  impl_->properties = std::move(properties);
}
Device::~Device() = default;

const DeviceProperties& Device::properties() const { return impl_->properties; }

Result<uint64_t> Device::allocate(size_t bytes) { return impl_->add_owned(bytes); }

Status Device::free(uint64_t address) {
  if (impl_->memory.erase(address) == 0) return make_error("fake: unknown address");
  return Ok{};
}

Result<uint64_t> Device::map_external(ExternalBytes bytes, std::string_view /*label*/) {
  const uint64_t base = impl_->next;
  FakeRegion& region = impl_->memory.try_emplace(base).first->second;
  region.data = reinterpret_cast<std::byte*>(bytes.data);
  region.size = bytes.size;
  region.release = std::move(bytes.release);
  impl_->next += (bytes.size + 255) / 256 * 256 + 256;
  return base;
}

Status Device::move_to_external(uint64_t address, ExternalBytes bytes) {
  auto it = impl_->memory.find(address);
  if (it == impl_->memory.end() || it->second.size != bytes.size) {
    if (bytes.release) bytes.release();
    return make_error("fake: move_to_external of an unknown allocation");
  }
  FakeRegion& region = it->second;
  std::memcpy(bytes.data, region.data, region.size);
  region.data = reinterpret_cast<std::byte*>(bytes.data);
  region.owned.clear();
  region.release = std::move(bytes.release);
  return Ok{};
}

Status Device::copy_to_device(uint64_t destination, const void* source, size_t bytes) {
  std::byte* p = impl_->at(destination, bytes);
  if (p == nullptr) return make_error("fake: copy_to_device out of range");
  std::memcpy(p, source, bytes);
  return Ok{};
}

Status Device::copy_to_host(void* destination, uint64_t source, size_t bytes) {
  std::byte* p = impl_->at(source, bytes);
  if (p == nullptr) return make_error("fake: copy_to_host out of range");
  std::memcpy(destination, p, bytes);
  return Ok{};
}

Status Device::copy_on_device(uint64_t destination, uint64_t source, size_t bytes) {
  std::byte* d = impl_->at(destination, bytes);
  std::byte* s = impl_->at(source, bytes);
  if (d == nullptr || s == nullptr) return make_error("fake: copy_on_device out of range");
  std::memmove(d, s, bytes);
  return Ok{};
}

Status Device::fill(uint64_t destination, uint8_t value, size_t bytes) {
  std::byte* p = impl_->at(destination, bytes);
  if (p == nullptr) return make_error("fake: fill out of range");
  std::memset(p, value, bytes);
  return Ok{};
}

Result<ModuleHandle> Device::load_module(std::string_view ptx_text, std::string_view /*name*/) {
  if (ptx_text.find(".entry") == std::string_view::npos &&
      ptx_text.find(".global") == std::string_view::npos)
    return make_error("fake: no .entry in the PTX");
  impl_->modules.push_back(fake::parse_entries(ptx_text));
  return static_cast<ModuleHandle>(impl_->modules.size() - 1);
}

Result<KernelInfo> Device::kernel(ModuleHandle module, std::string_view kernel_name) const {
  if (module >= impl_->modules.size()) return make_error("fake: bad module");
  auto it = impl_->modules[module].find(std::string(kernel_name));
  if (it == impl_->modules[module].end())
    return make_error("fake: no kernel " + std::string(kernel_name));
  return it->second;
}

Result<uint64_t> Device::symbol_address(ModuleHandle module, std::string_view symbol) const {
  auto key = std::make_pair(module, std::string(symbol));
  auto it = impl_->symbols.find(key);
  if (it != impl_->symbols.end()) return it->second;
  const uint64_t base = impl_->add_owned(4096);
  impl_->symbols[key] = base;
  return base;
}

Result<LaunchReport> Device::launch(ModuleHandle module, std::string_view kernel_name,
                                    const LaunchConfig& config,
                                    const std::vector<std::byte>& params) {
  auto info = kernel(module, kernel_name);
  if (!info) return info.error();
  fake::RecordedLaunch launch{std::string(kernel_name), config, params};
  fake::recorded_launches().push_back(launch);
  for (const auto& [substring, body] : fake::bodies())
    if (launch.kernel.find(substring) != std::string::npos) return body(*this, launch);
  LaunchReport report;
  report.stats.warp_instructions = 1;
  return report;
}

// The fake's tensor map: a marker and an index into the descriptors encoded so far.
std::vector<TensorMapDesc>& encoded_maps() {
  static std::vector<TensorMapDesc> maps;
  return maps;
}

void encode_tensor_map(const TensorMapDesc& desc, void* out) {
  std::memset(out, 0, kTensorMapBytes);
  std::memcpy(out, "faketmap", 8);
  const uint64_t index = encoded_maps().size();
  encoded_maps().push_back(desc);
  std::memcpy(static_cast<char*>(out) + 8, &index, sizeof index);
}

std::optional<TensorMapDesc> decode_tensor_map(const void* in) {
  if (std::memcmp(in, "faketmap", 8) != 0) return std::nullopt;
  uint64_t index = 0;
  std::memcpy(&index, static_cast<const char*>(in) + 8, sizeof index);
  if (index >= encoded_maps().size()) return std::nullopt;
  return encoded_maps()[index];
}

}  // namespace kiln::sim
