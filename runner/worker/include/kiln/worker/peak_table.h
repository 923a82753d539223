// The GPU's peak rates for "% of peak": dense tensor TFLOP/s per input dtype and HBM
// GB/s. A small built-in table of datasheet values (marked as such in the result),
// overridden by a kb/hw/*.json spec when one is found for the GPU's name (KILN_HW_DIR,
// or --hw-dir). The worker reads the JSON itself so the runner does not link kiln_kb.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kiln::worker {

struct PeakRates {
  std::string gpu;     // the spec's name
  std::string source;  // "built-in datasheet table" or the spec file's path
  double hbm_gbps = 0;
  std::map<std::string, double> tensor_tflops;  // by task dtype: f16 bf16 e4m3 e5m2 f32 f64 ...

  double tflops_for(const std::string& dtype) const;
};

struct Throughput {
  double tflops = 0;
  double gbps = 0;
  double pct_of_peak = 0;  // the larger of the two shares: the roofline that binds
  double pct_of_peak_flops = 0;
  double pct_of_peak_bandwidth = 0;

  nlohmann::json to_json() const;
};

class PeakTable {
 public:
  // Matches "NVIDIA H200", "H200 SXM", ... ignoring case, spaces, '-' and "NVIDIA".
  static std::optional<PeakRates> built_in(const std::string& gpu_name);
  // From a kb/hw spec directory, by id or alias; nullopt when none matches or it is malformed.
  static std::optional<PeakRates> from_hw_dir(const std::filesystem::path& dir,
                                              const std::string& gpu_name);
  // The spec directory if given and matching, else the built-in table.
  static std::optional<PeakRates> lookup(const std::string& gpu_name,
                                         const std::filesystem::path& hw_dir);

  static Throughput throughput(double flops, double bytes, double seconds, const std::string& dtype,
                               const std::optional<PeakRates>& peak);
};

}  // namespace kiln::worker
