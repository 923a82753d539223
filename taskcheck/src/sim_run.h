// One candidate through kiln-sim-run, as the simulate tool runs it: the task folder, the source,
// a build folder, the seed, and (to save a rebuild) the CPU reference already built.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kiln::taskcheck {

struct SimRequest {
  std::filesystem::path program;  // kiln-sim-run
  std::filesystem::path task_dir;
  std::filesystem::path source;
  std::filesystem::path build_dir;
  std::filesystem::path reference;  // reference.so; empty: kiln-sim-run builds it
  std::vector<std::string> workloads;
  uint64_t seed = 1;
  double time_limit_s = 300;
};

struct SimOutcome {
  bool ran = false;       // a report came back
  std::string problem;    // when !ran, or the report says ok: false: what went wrong
  std::string stage;      // the report's stage when ok is false (build_candidate, ...)
  nlohmann::json report;  // kiln-sim-run's report (ok, passed, total, workloads)
  int passed = 0;
  int total = 0;
  double seconds = 0;
};

SimOutcome run_sim(const SimRequest& request);

// "64x64x64: wrong_answer (3 mismatches, max abs 0.51)" for each workload of a report, "; "-joined.
std::string workload_summary(const nlohmann::json& report, bool failures_only);

}  // namespace kiln::taskcheck
