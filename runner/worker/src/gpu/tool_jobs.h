// Profile and sanitize jobs: the worker re-runs itself in run-once mode under Nsight
// Compute (`ncu --clock-control none`, exported, then read back as CSV) or under
// compute-sanitizer (one run per tool), and parses what the tool printed.
#pragma once

#include <chrono>
#include <vector>

#include "kiln/tasks/task.h"
#include "kiln/worker/event_stream.h"
#include "kiln/worker/job_driver.h"
#include "kiln/worker/worker_result.h"

namespace kiln::worker {

struct ToolJobInput {
  const JobSpec& spec;
  const WorkerOptions& options;
  const tasks::Task& task;
  const std::vector<tasks::Workload>& workloads;
  std::chrono::steady_clock::time_point started;
};

void run_profile(const ToolJobInput& input, EventStream& events, WorkerResult* result);
void run_sanitize(const ToolJobInput& input, EventStream& events, WorkerResult* result);

}  // namespace kiln::worker
