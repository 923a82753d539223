#include "runtime_state.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kiln::sim::runtime {
namespace {

constexpr size_t kMaxDiagnostics = 256;

// Options of the simulated device, from the environment (README.md, "Configuration").
SimulatorOptions options_from_environment() {
  SimulatorOptions options;
  if (const char* budget = std::getenv("KILN_SIM_INSTRUCTION_BUDGET"))
    options.instruction_budget = std::strtoull(budget, nullptr, 10);
  if (const char* limit = std::getenv("KILN_SIM_TIME_LIMIT"))
    options.time_limit_seconds = std::strtod(limit, nullptr);
  if (const char* its = std::getenv("KILN_SIM_ITS"))
    options.independent_thread_scheduling = std::string(its) == "1";
  return options;
}

}  // namespace

RuntimeState& RuntimeState::get() {
  // Never destroyed: see the header.
  static RuntimeState* state = new RuntimeState();
  return *state;
}

Device& RuntimeState::device() {
  if (!device_) device_ = std::make_unique<Device>(options_from_environment());
  return *device_;
}

void RuntimeState::reset_device() {
  device_.reset();
  for (auto& module : modules_) module->handle.reset();
  // Destroying the device ran the release of every external backing: exported objects are
  // unlinked, opened ones unmapped.
  allocations.clear();
  symbol_ranges.clear();
  mapped_ranges.clear();
  ipc_exports.clear();
  ipc_imports.clear();
  pool_allocations.clear();
  for (auto& [host, allocation] : host_allocations) allocation.device_address = 0;
  sticky_error = cudaSuccess;
  // A reset restores the device's limits and settings.
  printf_fifo_bytes = kDefaultPrintfFifo;
  persisting_l2_bytes.reset();
  cache_config = cudaFuncCachePreferNone;
  default_stream = StreamRecord{};
}

ModuleRecord* RuntimeState::add_module(std::string ptx, std::string ptx_error) {
  auto module = std::make_unique<ModuleRecord>();
  module->name = "module " + std::to_string(modules_.size() + 1);
  module->ptx = std::move(ptx);
  module->ptx_error = std::move(ptx_error);
  modules_.push_back(std::move(module));
  return modules_.back().get();
}

FunctionRecord* RuntimeState::add_function(ModuleRecord* module, const void* host_function,
                                           std::string device_name) {
  auto record = std::make_unique<FunctionRecord>();
  record->module = module;
  record->device_name = std::move(device_name);
  record->host_function = host_function;
  FunctionRecord* raw = record.get();
  if (auto old = functions_.find(host_function); old != functions_.end())
    kernel_handles_.erase(old->second.get());
  kernel_handles_.insert(raw);
  functions_[host_function] = std::move(record);
  return raw;
}

void RuntimeState::add_variable(ModuleRecord* module, const void* host_variable,
                                std::string device_name, size_t bytes, bool constant) {
  variables_[host_variable] = VariableRecord{module, std::move(device_name), bytes, constant};
}

void RuntimeState::remove_module(ModuleRecord* module) {
  module->unregistered = true;
  for (auto it = functions_.begin(); it != functions_.end();) {
    if (it->second->module == module) {
      kernel_handles_.erase(it->second.get());
      it = functions_.erase(it);
    } else {
      ++it;
    }
  }
  std::erase_if(variables_, [module](const auto& entry) { return entry.second.module == module; });
}

FunctionRecord* RuntimeState::find_function(const void* function) {
  if (auto it = functions_.find(function); it != functions_.end()) return it->second.get();
  if (kernel_handles_.contains(function))
    return static_cast<FunctionRecord*>(const_cast<void*>(function));
  return nullptr;
}

VariableRecord* RuntimeState::find_variable(const void* host_variable) {
  auto it = variables_.find(host_variable);
  return it == variables_.end() ? nullptr : &it->second;
}

Result<ModuleHandle> RuntimeState::module_handle(ModuleRecord& module) {
  if (module.handle) return *module.handle;
  if (module.unregistered)
    return make_error(module.name + " was unregistered (its shared object was unloaded)");
  if (module.ptx.empty())
    return make_error(module.ptx_error.empty() ? module.name + " has no PTX" : module.ptx_error);
  auto loaded = device().load_module(module.ptx, module.name);
  if (!loaded)
    return make_error("the simulator could not load the kernel's PTX (" + module.name +
                      "): " + loaded.error().message);
  module.handle = *loaded;
  return *loaded;
}

std::optional<std::pair<uint64_t, size_t>> RuntimeState::device_range(uint64_t address,
                                                                      size_t bytes) const {
  for (const auto* ranges : {&allocations, &symbol_ranges, &mapped_ranges}) {
    auto it = ranges->upper_bound(address);
    if (it == ranges->begin()) continue;
    --it;
    const uint64_t base = it->first;
    const size_t size = it->second;
    if (address - base <= size && bytes <= size - (address - base)) return *it;
  }
  return std::nullopt;
}

bool RuntimeState::is_device_address(uint64_t address) const {
  for (const auto* ranges : {&allocations, &symbol_ranges, &mapped_ranges}) {
    auto it = ranges->upper_bound(address);
    if (it == ranges->begin()) continue;
    --it;
    if (address - it->first < std::max<size_t>(it->second, 1)) return true;
  }
  return false;
}

bool RuntimeState::is_valid_stream(cudaStream_t stream) const {
  return stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread ||
         streams.contains(stream);
}

StreamRecord* RuntimeState::stream_record(cudaStream_t stream) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
    return &default_stream;
  auto it = streams.find(stream);
  return it == streams.end() ? nullptr : it->second.get();
}

void RuntimeState::add_printf(const LaunchReport& report) {
  printf_pending += report.printf_output;
  printf_pending_dropped += report.printf_dropped_bytes;
  const size_t room = kMaxReportedPrintf - std::min(kMaxReportedPrintf, printf_output.size());
  const size_t kept = std::min(room, report.printf_output.size());
  printf_output.append(report.printf_output, 0, kept);
  printf_dropped_bytes += report.printf_output.size() - kept + report.printf_dropped_bytes;
}

void RuntimeState::flush_printf() {
  if (!printf_pending.empty()) {
    std::fwrite(printf_pending.data(), 1, printf_pending.size(), stdout);
    std::fflush(stdout);
    printf_pending.clear();
  }
  if (printf_pending_dropped != 0) {
    std::fprintf(stderr,
                 "kiln simulator: %llu bytes of device printf output were dropped: a launch "
                 "printed more than the printf FIFO holds (%zu bytes; raise it with "
                 "cudaDeviceSetLimit(cudaLimitPrintfFifoSize, bytes), or print less)\n",
                 static_cast<unsigned long long>(printf_pending_dropped), printf_fifo_bytes);
    printf_pending_dropped = 0;
  }
}

void RuntimeState::add_diagnostic(std::string message) {
  if (diagnostics.size() == kMaxDiagnostics) diagnostics.erase(diagnostics.begin());
  diagnostics.push_back(std::move(message));
}

}  // namespace kiln::sim::runtime
