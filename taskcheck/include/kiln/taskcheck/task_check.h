// `kiln task check`: everything a task bundle must pass before its hash is frozen, as one
// recipe (tasks/FORMAT.md, "Checking a task"):
//   1. load        the loader's validation; the bundle hash
//   2. template    no TODO left from `kiln task new`
//   3. build       reference, baseline and starter, as the worker builds them (kernel_build)
//   4. negative compile: a broken candidate is refused with a diagnostic at its line
//   5. sim         the starter passes kiln-sim-run on the sim workloads; each wrong candidate
//                  (wrong_candidate.h) fails there
//   6. gpu         with a runner: the starter (and a library-free baseline) pass every gate of a
//                  full benchmark, timings stable over repeats; each wrong and the broken
//                  candidate fail a verify job. Without one: not run (no GPU), never passed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kiln/compiler/toolchain.h"
#include "kiln/runner/runner_selector.h"
#include "kiln/taskcheck/check_report.h"
#include "kiln/tasks/task.h"

namespace kiln::taskcheck {

struct CheckOptions {
  compiler::Toolchain toolchain;           // probed (nvcc_version set) by the caller
  std::filesystem::path sim_runner;        // kiln-sim-run
  std::filesystem::path work_dir;          // builds, kept between checks (each build is cached)
  std::vector<std::string> sim_workloads;  // names from sim_workloads; empty: all
  uint64_t seed = 1;
  double sim_time_limit_s = 300;  // per kiln-sim-run, building included
  // The GPU: a configured runner (KILN_RUNNER) or this machine's GPU; empty: the GPU steps are
  // not run.
  std::optional<runner::RunnerSettings> runner;
  int repeats = 2;  // full benchmarks of the starter
  // The stability budget per workload (each median's 95% interval, and the medians' CV across
  // repeats), overriding task.json's max_cv; unset: the task's, else kDefaultMaxCv.
  std::optional<double> max_cv;
  std::string kiln_version;
  // One line per step as it starts and ends (the CLI prints them).
  std::function<void(const std::string& line)> progress;
};

// gpu_stability's budget when neither --max-cv nor task.json's max_cv gives one.
inline constexpr double kDefaultMaxCv = 0.05;

// The budget gpu_stability judges with: options.max_cv, else task.max_cv, else kDefaultMaxCv;
// `source` says which ("--max-cv", "task.json max_cv", "default").
double stability_budget(const tasks::Task& task, const CheckOptions& options,
                        std::string* source = nullptr);

CheckReport check_task(const std::filesystem::path& bundle, const CheckOptions& options);

}  // namespace kiln::taskcheck
