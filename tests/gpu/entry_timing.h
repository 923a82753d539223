// A zoo entry on a real GPU, timed: EntryRun's correctness checks, then on the last shape
// 3 warm-up launches and `samples` cold-L2 samples (cold_l2_timer.h), interleaved with
// cuBLAS for gemm_tn, the outputs of the timed runs checked again, and one JSON
// measurement (the "measured" fields of kb/zoo/README.md plus "id") to the Report.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "cublas_gemm.h"
#include "entry_run.h"

namespace kiln::zoo {

class TimedEntryRun : public EntryRun {
 public:
  using EntryRun::EntryRun;

 protected:
  void time_shape(ZooCase& test_case, DeviceCase& device, const ReferenceRun& reference,
                  const std::string& label, const nlohmann::ordered_json& shape_json) override;

 private:
  // The cuBLAS baseline for gemm_tn, warmed up and checked once against the reference;
  // nullptr for other ops or when cuBLAS fails (reported).
  std::unique_ptr<CublasGemm> prepare_baseline(const ZooCase& test_case, const DeviceCase& device,
                                               const ReferenceRun& reference, DeviceBuffer& out,
                                               const std::string& when);
  // Reports the measurement as one JSON line.
  void record(const ZooCase& test_case, const nlohmann::ordered_json& shape_json,
              const std::string& when, double time_us, int samples,
              std::optional<double> baseline_us);
};

}  // namespace kiln::zoo
