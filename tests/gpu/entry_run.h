// Runs one zoo entry on the GPU (in the forked child; see child_process.h): for every test
// shape, inputs from a seed, the CPU reference, two launches with differently poisoned
// outputs compared element by element, guard bands and inputs checked; then, on the last
// shape, cold-L2 timing (and cuBLAS for gemm_tn) as one JSON measurement.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "report.h"
#include "zoo_meta.h"

namespace kiln::zoo {

struct RunOptions {
  uint64_t seed = 0;                     // mixed into every shape's seed (KILN_ZOO_SEED)
  int samples = 30;                      // timed samples, at least 20 (KILN_ZOO_SAMPLES)
  int warmup = 3;                        // untimed launches before timing
  bool time = true;                      // false: correctness only (KILN_ZOO_NO_TIMING=1)
  std::string command = "ctest -L gpu";  // recorded with each measurement
};

// Everything that happens goes to `report` (failures, logs, the measurement).
void run_zoo_entry(const ZooMeta& meta, const std::filesystem::path& library,
                   const RunOptions& options, Report& report);

}  // namespace kiln::zoo
