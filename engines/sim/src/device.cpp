#include "kiln/sim/device.h"

#include <chrono>
#include <cstring>

#include "cta_runner.h"
#include "exec.h"
#include "global_memory.h"
#include "module_image.h"
#include "observer_hook.h"

namespace kiln::sim {

namespace {

const char* const kClassNames[] = {"alu",     "fp32",    "fp16",       "tensor",
                                   "load",    "store",   "atomic",     "barrier",
                                   "shuffle", "control", "async_copy", "other"};
const char* const kSpaceNames[] = {"global", "shared", "local", "const", "param", "generic"};

LaunchReport invalid_launch(std::string message) {
  LaunchReport report;
  LaunchFault f;
  f.kind = "invalid_launch";
  f.message = std::move(message);
  report.faults.push_back(std::move(f));
  return report;
}

std::string dims(const Dim3& d) {
  return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

}  // namespace

struct Device::Impl {
  SimulatorOptions options;
  DeviceProperties properties;
  GlobalMemory memory;
  std::vector<std::unique_ptr<ModuleImage>> modules;

  Impl(SimulatorOptions o, DeviceProperties p)
      : options(o), properties(std::move(p)), memory(properties.global_memory_bytes) {}

  Result<ModuleImage*> module(ModuleHandle handle) const {
    if (handle >= modules.size() || !modules[handle]) {
      return make_error("unknown module handle " + std::to_string(handle) +
                        "; use the handle load_module returned");
    }
    return modules[handle].get();
  }

  Status check_range(uint64_t address, size_t bytes, const char* what) const {
    if (bytes == 0) return Ok{};
    if (memory.find(address, bytes) == nullptr) {
      return make_error(std::string(what) + ": " + memory.describe_miss(address, bytes) +
                        "; copy within a buffer that cudaMalloc returned");
    }
    return Ok{};
  }
};

Device::Device(SimulatorOptions options, DeviceProperties properties)
    : impl_(std::make_unique<Impl>(options, std::move(properties))) {}
Device::~Device() = default;

const DeviceProperties& Device::properties() const { return impl_->properties; }

Result<uint64_t> Device::allocate(size_t bytes) {
  return impl_->memory.allocate(bytes, "cudaMalloc");
}

Status Device::free(uint64_t address) { return impl_->memory.free(address); }

Result<uint64_t> Device::map_external(ExternalBytes bytes, std::string_view label) {
  return impl_->memory.map_external(std::move(bytes), std::string(label));
}

Status Device::move_to_external(uint64_t address, ExternalBytes bytes) {
  return impl_->memory.move_to_external(address, std::move(bytes));
}

Status Device::copy_to_device(uint64_t destination, const void* source, size_t bytes) {
  Status s = impl_->check_range(destination, bytes, "copy to device");
  if (!s) return s;
  if (bytes) std::memcpy(impl_->memory.bytes(destination, bytes), source, bytes);
  return Ok{};
}

Status Device::copy_to_host(void* destination, uint64_t source, size_t bytes) {
  Status s = impl_->check_range(source, bytes, "copy to host");
  if (!s) return s;
  if (bytes) std::memcpy(destination, impl_->memory.bytes(source, bytes), bytes);
  return Ok{};
}

Status Device::copy_on_device(uint64_t destination, uint64_t source, size_t bytes) {
  Status s = impl_->check_range(source, bytes, "device-to-device copy source");
  if (!s) return s;
  s = impl_->check_range(destination, bytes, "device-to-device copy destination");
  if (!s) return s;
  if (bytes) {
    std::memmove(impl_->memory.bytes(destination, bytes), impl_->memory.bytes(source, bytes),
                 bytes);
  }
  return Ok{};
}

Status Device::fill(uint64_t destination, uint8_t value, size_t bytes) {
  Status s = impl_->check_range(destination, bytes, "memset");
  if (!s) return s;
  if (bytes) std::memset(impl_->memory.bytes(destination, bytes), value, bytes);
  return Ok{};
}

Result<ModuleHandle> Device::load_module(std::string_view ptx_text, std::string_view name) {
  Result<std::unique_ptr<ModuleImage>> image = ModuleImage::load(ptx_text, name, impl_->memory);
  if (!image) return make_error(image.error().message);
  impl_->modules.push_back(std::move(image.value()));
  return static_cast<ModuleHandle>(impl_->modules.size() - 1);
}

Result<KernelInfo> Device::kernel(ModuleHandle module, std::string_view kernel_name) const {
  Result<ModuleImage*> m = impl_->module(module);
  if (!m) return make_error(m.error().message);
  return (*m)->kernel_info(kernel_name);
}

Result<uint64_t> Device::symbol_address(ModuleHandle module, std::string_view symbol) const {
  Result<ModuleImage*> m = impl_->module(module);
  if (!m) return make_error(m.error().message);
  return (*m)->symbol_address(symbol);
}

Result<LaunchReport> Device::launch(ModuleHandle module, std::string_view kernel_name,
                                    const LaunchConfig& config,
                                    const std::vector<std::byte>& params) {
  Result<ModuleImage*> m = impl_->module(module);
  if (!m) return make_error(m.error().message);
  ModuleImage& image = **m;
  Result<KernelInfo> info = image.kernel_info(kernel_name);
  if (!info) return make_error(info.error().message);
  Result<const Program*> program = image.program(kernel_name);
  if (!program) return make_error(program.error().message);
  const Program& p = **program;
  const DeviceProperties& props = impl_->properties;

  const Dim3& b = config.block;
  const Dim3& g = config.grid;
  uint64_t threads = static_cast<uint64_t>(b.x) * b.y * b.z;
  if (threads == 0 || g.x == 0 || g.y == 0 || g.z == 0) {
    return invalid_launch("grid " + dims(g) + " and block " + dims(b) +
                          " must have every dimension at least 1");
  }
  if (threads > props.max_threads_per_block || b.x > props.max_block_dim.x ||
      b.y > props.max_block_dim.y || b.z > props.max_block_dim.z) {
    return invalid_launch("block " + dims(b) + " has " + std::to_string(threads) +
                          " threads; the limit is " + std::to_string(props.max_threads_per_block) +
                          " per block with z at most " + std::to_string(props.max_block_dim.z));
  }
  if (info->max_threads != 0 && threads > info->max_threads) {
    return invalid_launch("block of " + std::to_string(threads) +
                          " threads exceeds the kernel's "
                          ".maxntid (__launch_bounds__) of " +
                          std::to_string(info->max_threads));
  }
  if (g.y > props.max_grid_dim.y || g.z > props.max_grid_dim.z) {
    return invalid_launch("grid " + dims(g) + " exceeds the limits " + dims(props.max_grid_dim));
  }
  // Clusters: the launch's attribute, else the kernel's __cluster_dims__ (.reqnctapercluster).
  Dim3 cluster = config.cluster;
  if (cluster.x * cluster.y * cluster.z <= 1) cluster = info->cluster;
  if (cluster.x == 0 || cluster.y == 0 || cluster.z == 0) cluster = {1, 1, 1};
  if (g.x % cluster.x != 0 || g.y % cluster.y != 0 || g.z % cluster.z != 0) {
    return invalid_launch("grid " + dims(g) + " is not a whole number of clusters of " +
                          dims(cluster) + "; make each grid dimension a multiple of the cluster's");
  }
  if (cluster.x * cluster.y * cluster.z > 16) {
    return invalid_launch("cluster " + dims(cluster) + " has more than 16 CTAs");
  }
  if (params.size() < info->param_bytes) {
    return invalid_launch("the kernel takes " + std::to_string(info->param_bytes) +
                          " bytes of parameters but the launch passed " +
                          std::to_string(params.size()) + "; pack every argument");
  }
  uint64_t shared = p.shared_static_bytes;
  if (config.dynamic_shared_bytes != 0) {
    shared = static_cast<uint64_t>(p.shared_dynamic_offset) + config.dynamic_shared_bytes;
  }
  if (shared > props.shared_memory_per_block_optin) {
    return invalid_launch("launch needs " + std::to_string(shared) +
                          " bytes of shared memory; the limit is " +
                          std::to_string(props.shared_memory_per_block_optin) +
                          " per block even with cudaFuncSetAttribute");
  }

  Exec x;
  x.program = &p;
  x.operands = p.operands.data();
  x.global = &impl_->memory;
  std::vector<uint8_t> param_buffer(std::max<size_t>(params.size(), 1));
  std::memcpy(param_buffer.data(), params.data(), params.size());
  x.params = param_buffer.data();
  x.param_bytes = static_cast<uint32_t>(params.size());
  x.config = config;
  x.config.cluster = cluster;
  x.shared_bytes = static_cast<uint32_t>(shared);
  x.printf_limit = config.printf_buffer_bytes;

  RunLimits limits;
  limits.instruction_budget = impl_->options.instruction_budget;
  limits.time_limit_seconds = impl_->options.time_limit_seconds;
  limits.multiprocessors = static_cast<uint32_t>(std::max(1, props.multiprocessor_count));
  limits.independent_thread_scheduling = impl_->options.independent_thread_scheduling;
  x.observer = impl_->options.observer ? impl_->options.observer : process_observer();
  if (x.observer != nullptr) {
    limits.schedule = x.observer->schedule();
    x.observer->launch_begin({std::string(kernel_name), g, b, x.config.cluster,
                              static_cast<uint32_t>(threads), x.shared_bytes, &p.ptx_lines,
                              &p.texts});
  }
  auto start = std::chrono::steady_clock::now();
  CtaRunner runner(x, limits);
  bool ok = true;
  const Dim3& cl = x.config.cluster;
  for (uint32_t z = 0; z < g.z && ok; z += cl.z) {
    for (uint32_t y = 0; y < g.y && ok; y += cl.y) {
      for (uint32_t xx = 0; xx < g.x && ok; xx += cl.x) ok = runner.run({xx, y, z});
    }
  }

  if (x.observer != nullptr) {
    std::vector<std::string> sources;
    for (uint32_t line : p.ptx_lines) sources.push_back(image.source_of(line));
    x.observer->launch_end(sources);
  }

  LaunchReport report;
  LaunchStats& s = report.stats;
  s.warp_instructions = x.counters.warp_instructions;
  s.lane_instructions = x.counters.lane_instructions;
  for (size_t i = 0; i < x.counters.by_class.size(); ++i) {
    if (x.counters.by_class[i] != 0)
      s.by_class.emplace_back(kClassNames[i], x.counters.by_class[i]);
  }
  for (size_t i = 0; i < x.counters.bytes.size(); ++i) {
    if (x.counters.bytes[i] != 0)
      s.bytes_by_space.emplace_back(kSpaceNames[i], x.counters.bytes[i]);
  }
  s.shared_bank_conflicts = x.counters.bank_conflicts;
  s.divergent_branches = x.counters.divergent_branches;
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.faults = std::move(x.faults);
  report.printf_output = std::move(x.printf_text);
  report.printf_dropped_bytes = x.printf_dropped;
  for (LaunchFault& f : report.faults) {
    if (f.source.empty()) f.source = image.source_of(f.ptx_line);
    if (f.source.empty()) continue;
    f.message += " (at " + f.source + ")";
  }
  return report;
}

}  // namespace kiln::sim
