// The run-once mode that ncu and compute-sanitizer wrap: build (cached), load, draw the
// workload's inputs on the host (so no harness kernel runs in the profiled process and
// every kernel the tool sees is the candidate's), poison the outputs, call kiln_launch
// `calls` times on a stream of its own, synchronize, report on stderr.
#pragma once

#include <string>

#include "kiln/worker/job_driver.h"

namespace kiln::worker {

struct RunOnceOptions {
  std::string workload;
  int calls = 1;
  std::string target = "candidate";  // or "baseline"
};

// 0: every call returned KILN_OK without a CUDA error; 3: otherwise (said on stderr).
int run_once(const JobSpec& spec, const WorkerOptions& options, const RunOnceOptions& once);

}  // namespace kiln::worker
