// The GPU part of `kiln task check`, through a runner (a KILN_RUNNER URL, or this machine's GPU
// with kiln-worker, as the benchmark tool finds them): full benchmarks of the starter (and of a
// baseline that links no library) with every gate, their timings' stability over repeats, and a
// verify job for each wrong candidate and the broken one, each of which must fail.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/taskcheck/check_report.h"
#include "kiln/taskcheck/task_check.h"
#include "kiln/taskcheck/wrong_candidate.h"
#include "kiln/tasks/task.h"

namespace kiln::taskcheck {

// Runs one job and returns its RESULT (or an error: no runner answered, the job broke).
using JobRunner = std::function<Result<nlohmann::json>(const nlohmann::json& body)>;

struct GpuInputs {
  const tasks::Task* task = nullptr;
  std::string starter;
  std::string baseline;
  std::vector<WrongCandidate> wrong;
  std::string broken;
};

// The GPU steps, run through `run_job`. `progress` gets a line per job.
std::vector<Step> gpu_steps(const GpuInputs& inputs, const CheckOptions& options,
                            const JobRunner& run_job);

// The steps a check without a GPU reports: each GPU step, not run, with why.
std::vector<Step> gpu_steps_not_run(const GpuInputs& inputs, const std::string& why);

// Judging RESULTs (public for tests): a benchmark of a candidate that must pass every gate,
// and the stability of its timings over repeated results.
Step judge_benchmark(const std::string& id, const std::string& title,
                     const std::vector<nlohmann::json>& results);
Step judge_stability(const std::string& id, const std::vector<nlohmann::json>& results,
                     double max_cv, bool include_baseline);
// A verify RESULT of a candidate that must be refused: flagged when it passed.
Step judge_negative(const std::string& id, const std::string& title, const nlohmann::json& result,
                    bool must_fail_to_build);

}  // namespace kiln::taskcheck
