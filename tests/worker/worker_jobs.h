// Running kiln-worker (or kiln-worker-sim) on one job the way the runner does, for the tests:
// job.json written into a folder of the cache, the worker's stdout read back as events, the
// last one the result.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kiln::worker::testing {

struct Job {
  std::string name;  // also the build cache entry and the result file name
  std::string kind = "verify";
  std::string task = "fp16_gemm";
  std::filesystem::path candidate;
  std::vector<std::string> workloads;
  nlohmann::json limits = nlohmann::json::object();
  nlohmann::json extra = nlohmann::json::object();
};

struct Outcome {
  nlohmann::json result;
  std::string problem;  // why no result came back
  std::string stderr_tail;
};

struct WorkerRun {
  std::filesystem::path worker;   // the executable
  std::filesystem::path cache;    // builds/ and jobs/ go here
  bool build_only = false;        // --build-only
  std::filesystem::path results;  // non-empty: every result is also written here as NAME.json
};

Outcome run_job(const WorkerRun& run, const Job& job);
// Independent jobs side by side, one process each.
std::vector<Outcome> run_jobs(const WorkerRun& run, const std::vector<Job>& jobs);

// The gates the candidate failed (a gate that did not run is not a failure).
std::vector<std::string> failed_gates(const nlohmann::json& result);
// The state of one gate ("passed", "failed", "not_run"), or "" when the result lacks it.
std::string gate_state(const nlohmann::json& result, const std::string& gate);
// One line for a failed expectation: the problem, status, error and the end of stderr.
std::string brief(const Outcome& outcome);

}  // namespace kiln::worker::testing
