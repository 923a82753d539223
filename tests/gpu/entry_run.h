// Runs one zoo entry through the CUDA runtime API (in the forked child; see
// child_process.h): for the test shapes, inputs from a seed, the CPU reference, two launches
// with differently poisoned outputs compared element by element, guard bands and inputs
// checked. EntryRun is the correctness part; TimedEntryRun (entry_timing.h) adds cold-L2
// timing of the last shape on a real GPU. The same EntryRun, linked against
// libkiln_cudart_sim instead of libcudart, runs the entry on the CPU simulator.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "device_buffer.h"
#include "kiln/abi.h"
#include "output_compare.h"
#include "reference_run.h"
#include "report.h"
#include "zoo_case.h"
#include "zoo_meta.h"

namespace kiln::zoo {

struct RunOptions {
  uint64_t seed = 0;                     // mixed into every shape's seed (KILN_ZOO_SEED)
  int samples = 30;                      // timed samples, at least 20 (KILN_ZOO_SAMPLES)
  int warmup = 3;                        // untimed launches before timing
  bool time = true;                      // false: correctness only (KILN_ZOO_NO_TIMING=1)
  size_t max_shapes = 0;                 // run only the first N test shapes; 0: all
  std::string command = "ctest -L gpu";  // recorded with each measurement
};

// `value` printed with `digits` significant digits.
std::string format_number(double value, int digits = 4);

// The entry's tensors on the device. Outputs sit between guard bands.
struct DeviceCase {
  std::vector<DeviceBuffer> inputs;
  std::vector<DeviceBuffer> outputs;  // kGuardBytes + data + kGuardBytes
  std::vector<kiln_tensor> descriptors;
};

// Everything that happens goes to the Report (failures, logs, measurements).
class EntryRun {
 public:
  EntryRun(const ZooMeta& meta, const RunOptions& options, Report& report);
  virtual ~EntryRun();
  EntryRun(const EntryRun&) = delete;
  EntryRun& operator=(const EntryRun&) = delete;

  void run(const std::filesystem::path& library);

 protected:
  // Called for the last shape when options.time is set and the shape is correct. This
  // class only checks correctness, so it logs that nothing is timed.
  virtual void time_shape(ZooCase& test_case, DeviceCase& device, const ReferenceRun& reference,
                          const std::string& label, const nlohmann::ordered_json& shape_json);

  // Reports a failed CUDA call. Any error but running out of memory also ends the entry.
  bool check(cudaError_t error, const std::string& what);
  // One kiln_launch on the stream; false (reported) when it did not enqueue cleanly.
  bool launch(ZooCase& test_case, DeviceCase& device, const std::string& when);
  // Waits for the stream; an error here came from the kernel and ends the entry's run.
  bool finish(const std::string& when);
  // Checks the outputs of the work just finished; reports mismatches.
  bool check_outputs(const ZooCase& test_case, const DeviceCase& device,
                     const ReferenceRun& reference, const std::string& when,
                     std::vector<Comparison>& comparisons);

  const ZooMeta& meta_;
  const RunOptions& options_;
  Report& report_;
  cudaStream_t stream_ = nullptr;
  std::string gpu_name_;
  bool broken_ = false;  // a kernel fault: the context is unusable
  // The byte the outputs were last poisoned with: what an op that writes only some rows
  // (ReferenceRun::others_untouched) must leave in the others.
  unsigned char poison_ = 0;

 private:
  bool setup(const std::filesystem::path& library);
  void run_shape(size_t index);
  bool upload(ZooCase& test_case, DeviceCase& device, const std::string& label);
  bool copy_outputs(const ZooCase& test_case, const DeviceCase& device,
                    std::vector<HostTensor>& out, const std::string& when);
  std::vector<Comparison> compare_all(const std::vector<HostTensor>& actual,
                                      const ReferenceRun& reference);
  bool correct_run(ZooCase& test_case, DeviceCase& device, const ReferenceRun& reference,
                   const std::string& label, unsigned char poison,
                   std::vector<Comparison>& comparisons);
  bool check_guards(const ZooCase& test_case, const DeviceCase& device, const std::string& when);
  bool check_inputs(const ZooCase& test_case, const DeviceCase& device, const std::string& when);

  kiln_launch_fn launch_ = nullptr;
};

}  // namespace kiln::zoo
