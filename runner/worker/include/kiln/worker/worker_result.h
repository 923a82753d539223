// The RESULT object of runner/protocol/PROTOCOL.md, assembled piece by piece as the job runs.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kiln/compiler/kernel_build.h"
#include "kiln/tasks/output_comparison.h"
#include "kiln/worker/gate_ledger.h"
#include "kiln/worker/peak_table.h"
#include "kiln/worker/sample_statistics.h"

namespace kiln::worker {

struct WorkloadResult {
  std::string name;
  bool ran = false;
  bool passed = false;
  std::string failure;       // "gate: detail" when !passed
  tasks::ErrorStats errors;  // against the CPU reference (sampled rows for the large workloads)
  std::string checked;       // how correctness was established
  std::optional<SampleSummary> time_us;
  std::optional<SampleSummary> baseline_time_us;
  std::optional<SampleSummary> event_time_us;  // CUDA events around the call, for comparison
  double speedup = 0;
  // With an incumbent (JobSpec::incumbent): its times in the same samples, and its median over
  // the candidate's (above 1: the candidate is faster).
  std::optional<SampleSummary> incumbent_time_us;
  double speedup_vs_incumbent = 0;
  Throughput throughput;
  std::string stop_reason;
  int64_t samples_discarded_throttled = 0;
  nlohmann::json extra = nlohmann::json::object();

  nlohmann::json to_json() const;
};

struct GpuInfo {
  std::string name;
  int index = 0;
  std::string driver;
  std::string cuda;
  std::string pci_bus_id;
  int sm_count = 0;
  int64_t l2_bytes = 0;
  bool nvml = false;
  std::string nvml_note;
  std::vector<double> sm_clock_mhz;  // one per kept sample
  std::set<std::string> throttle_reasons_seen;
  int64_t samples_discarded_throttled = 0;
  std::optional<PeakRates> peak;

  nlohmann::json to_json() const;
};

struct WorkerResult {
  std::string status = "error";  // passed | failed | error
  std::string stage = "build";
  std::string error;
  std::string kind;
  std::string task_name;
  std::string task_sha256;
  std::string candidate_sha256;
  std::string incumbent_sha256;  // empty: the job timed no incumbent
  std::optional<GpuInfo> gpu;
  std::optional<compiler::BuildOutcome> build;
  GateLedger gates;
  std::vector<WorkloadResult> workloads;
  int task_workload_count = 0;  // how many workloads the task has (a score needs all)
  int job_workload_count = 0;   // how many this job asked for (all of the task's when none named)
  nlohmann::json profile;       // kind=profile
  nlohmann::json sanitize;      // kind=sanitize
  nlohmann::json isolation;     // how the candidate's process was separated and confined
  nlohmann::json wall_time;     // verify/benchmark: where the job's time went (wall_time.h)
  std::vector<std::string> notes;

  // Counts, geometric mean of the speedups and whether the result can be scored.
  nlohmann::json summary() const;
  // {"sha256", "speedup_geomean", "workloads"}: the candidate against the incumbent, over the
  // workloads that passed with both timed (speedup_geomean null when none did).
  nlohmann::json incumbent_summary() const;
  nlohmann::json to_json() const;
};

}  // namespace kiln::worker
