// NVML, loaded at run time (dlopen("libnvidia-ml.so.1")) so the worker builds where no
// nvml.h is installed and runs where NVML is absent (then it says so in the result).
// Read-only: SM clock, clock-event (throttle) reasons, temperature and power per sample.
// The worker never sets clocks or power limits.
#pragma once

#include <cstdint>
#include <string>

namespace kiln::worker {

struct NvmlSample {
  bool ok = false;
  unsigned sm_clock_mhz = 0;
  uint64_t reasons = 0;  // nvmlClocksEventReasons bits (throttle_policy.h)
  unsigned temperature_c = 0;
  double power_w = 0;
};

class NvmlProbe {
 public:
  NvmlProbe() = default;
  ~NvmlProbe();
  NvmlProbe(const NvmlProbe&) = delete;
  NvmlProbe& operator=(const NvmlProbe&) = delete;

  // Loads the library and finds the device by PCI bus id ("0000:19:00.0"), else by index.
  // False with note() saying why when NVML is missing or the device is not found.
  bool open(const std::string& pci_bus_id, unsigned fallback_index,
            const std::string& library = "libnvidia-ml.so.1");
  bool available() const { return device_ != nullptr; }
  const std::string& note() const { return note_; }
  std::string driver_version() const;

  NvmlSample sample() const;

 private:
  using Init = int (*)();
  using Shutdown = int (*)();
  using ByPci = int (*)(const char*, void**);
  using ByIndex = int (*)(unsigned, void**);
  using ClockInfo = int (*)(void*, int, unsigned*);
  using Reasons = int (*)(void*, unsigned long long*);
  using Temperature = int (*)(void*, int, unsigned*);
  using Power = int (*)(void*, unsigned*);
  using DriverVersion = int (*)(char*, unsigned);

  void* library_ = nullptr;
  void* device_ = nullptr;
  bool initialized_ = false;
  Shutdown shutdown_ = nullptr;
  ClockInfo clock_info_ = nullptr;
  Reasons reasons_ = nullptr;
  Temperature temperature_ = nullptr;
  Power power_ = nullptr;
  DriverVersion driver_version_ = nullptr;
  std::string note_;
};

}  // namespace kiln::worker
