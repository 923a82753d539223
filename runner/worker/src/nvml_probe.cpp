#include "kiln/worker/nvml_probe.h"

#include <dlfcn.h>

namespace kiln::worker {

namespace {

constexpr int kNvmlSuccess = 0;
constexpr int kClockSm = 1;         // NVML_CLOCK_SM
constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU

template <typename F>
F find(void* library, const char* name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

}  // namespace

NvmlProbe::~NvmlProbe() {
  if (initialized_ && shutdown_ != nullptr) shutdown_();
  // The library stays loaded: unloading NVML while the driver holds state is not worth the risk.
}

bool NvmlProbe::open(const std::string& pci_bus_id, unsigned fallback_index,
                     const std::string& library) {
  library_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    note_ = "NVML not available (" + library +
            " could not be loaded): no clocks or throttle reasons recorded";
    return false;
  }
  auto init = find<Init>(library_, "nvmlInit_v2");
  shutdown_ = find<Shutdown>(library_, "nvmlShutdown");
  auto by_pci = find<ByPci>(library_, "nvmlDeviceGetHandleByPciBusId_v2");
  auto by_index = find<ByIndex>(library_, "nvmlDeviceGetHandleByIndex_v2");
  clock_info_ = find<ClockInfo>(library_, "nvmlDeviceGetClockInfo");
  reasons_ = find<Reasons>(library_, "nvmlDeviceGetCurrentClocksEventReasons");
  if (reasons_ == nullptr)
    reasons_ = find<Reasons>(library_, "nvmlDeviceGetCurrentClocksThrottleReasons");
  temperature_ = find<Temperature>(library_, "nvmlDeviceGetTemperature");
  power_ = find<Power>(library_, "nvmlDeviceGetPowerUsage");
  driver_version_ = find<DriverVersion>(library_, "nvmlSystemGetDriverVersion");
  if (init == nullptr || clock_info_ == nullptr || (by_pci == nullptr && by_index == nullptr)) {
    note_ = "NVML is missing entry points (nvmlInit_v2, nvmlDeviceGetClockInfo, handle lookup)";
    return false;
  }
  if (init() != kNvmlSuccess) {
    note_ = "nvmlInit_v2 failed: no clocks or throttle reasons recorded";
    return false;
  }
  initialized_ = true;
  void* device = nullptr;
  // CUDA writes the PCI domain with 4 digits, NVML with 8; try both spellings.
  for (const std::string& id : {pci_bus_id, "0000" + pci_bus_id}) {
    if (by_pci != nullptr && !pci_bus_id.empty() && by_pci(id.c_str(), &device) == kNvmlSuccess) {
      device_ = device;
      return true;
    }
  }
  if (by_index != nullptr && by_index(fallback_index, &device) == kNvmlSuccess) {
    device_ = device;
    note_ = "NVML device found by index " + std::to_string(fallback_index) +
            ", not by PCI bus id " + pci_bus_id;
    return true;
  }
  note_ = "NVML has no device for PCI bus id " + pci_bus_id;
  return false;
}

std::string NvmlProbe::driver_version() const {
  if (!initialized_ || driver_version_ == nullptr) return {};
  char buffer[96] = {};
  return driver_version_(buffer, sizeof buffer) == kNvmlSuccess ? std::string(buffer)
                                                                : std::string();
}

NvmlSample NvmlProbe::sample() const {
  NvmlSample s;
  if (device_ == nullptr) return s;
  s.ok = clock_info_(device_, kClockSm, &s.sm_clock_mhz) == kNvmlSuccess;
  unsigned long long reasons = 0;
  if (reasons_ != nullptr && reasons_(device_, &reasons) == kNvmlSuccess) s.reasons = reasons;
  if (temperature_ != nullptr) temperature_(device_, kTemperatureGpu, &s.temperature_c);
  unsigned milliwatts = 0;
  if (power_ != nullptr && power_(device_, &milliwatts) == kNvmlSuccess)
    s.power_w = milliwatts / 1000.0;
  return s;
}

}  // namespace kiln::worker
