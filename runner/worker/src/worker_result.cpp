#include "kiln/worker/worker_result.h"

#include <algorithm>

namespace kiln::worker {

nlohmann::json WorkloadResult::to_json() const {
  nlohmann::json j = {{"name", name}, {"passed", passed}};
  if (!failure.empty()) j["failure"] = failure;
  if (errors.checked > 0) j["errors"] = errors.to_json();
  if (!checked.empty()) j["checked"] = checked;
  if (time_us) j["time_us"] = time_us->to_json();
  if (baseline_time_us) j["baseline_time_us"] = baseline_time_us->to_json();
  if (event_time_us) j["event_time_us"] = event_time_us->to_json();
  if (time_us && baseline_time_us) {
    j["speedup"] = speedup;
    j["tflops"] = throughput.tflops;
    j["gbps"] = throughput.gbps;
    j["pct_of_peak"] = throughput.pct_of_peak;
    j["pct_of_peak_flops"] = throughput.pct_of_peak_flops;
    j["pct_of_peak_bandwidth"] = throughput.pct_of_peak_bandwidth;
  }
  if (time_us && incumbent_time_us) {
    j["incumbent_time_us"] = incumbent_time_us->to_json();
    j["speedup_vs_incumbent"] = speedup_vs_incumbent;
  }
  if (!stop_reason.empty()) j["stop"] = stop_reason;
  if (samples_discarded_throttled > 0)
    j["samples_discarded_throttled"] = samples_discarded_throttled;
  for (const auto& [key, value] : extra.items()) j[key] = value;
  return j;
}

nlohmann::json GpuInfo::to_json() const {
  nlohmann::json j = {{"name", name},
                      {"index", index},
                      {"driver", driver},
                      {"cuda", cuda},
                      {"pci_bus_id", pci_bus_id},
                      {"sms", sm_count},
                      {"l2_bytes", l2_bytes},
                      {"nvml", nvml}};
  if (!nvml_note.empty()) j["nvml_note"] = nvml_note;
  if (!sm_clock_mhz.empty()) {
    const SampleSummary s = SampleStatistics::summarize(sm_clock_mhz);
    j["sm_clock_mhz"] = {{"min", *std::min_element(sm_clock_mhz.begin(), sm_clock_mhz.end())},
                         {"median", s.median},
                         {"max", *std::max_element(sm_clock_mhz.begin(), sm_clock_mhz.end())}};
  }
  j["throttle_reasons_seen"] =
      std::vector<std::string>(throttle_reasons_seen.begin(), throttle_reasons_seen.end());
  j["samples_discarded_throttled"] = samples_discarded_throttled;
  if (peak) {
    j["peak"] = {{"name", peak->gpu},
                 {"source", peak->source},
                 {"hbm_gbps", peak->hbm_gbps},
                 {"tensor_tflops", peak->tensor_tflops}};
  }
  return j;
}

nlohmann::json WorkerResult::summary() const {
  int passed_count = 0;
  int ran = 0;
  std::vector<double> speedups;
  for (const auto& w : workloads) {
    if (w.ran) ++ran;
    if (w.passed) ++passed_count;
    if (w.passed && w.speedup > 0) speedups.push_back(w.speedup);
  }
  // The server checks these against the rows (runner/src/result_check.cpp): total is the
  // job's workload count; a score needs every workload of the task, timed and passed.
  const int total = job_workload_count;
  // A score also needs every gate of the kind's fixed set passed: one that could not run
  // (CUPTI or NVML missing) leaves the result unscored, and the summary says which and why.
  const auto required = required_gates(kind);
  const bool all = kind == "benchmark" && status == "passed" && passed_count == total &&
                   !gates.any_failed() && gates.all_passed(required) &&
                   static_cast<int>(speedups.size()) == total && total == task_workload_count;
  nlohmann::json j = {{"passed", passed_count}, {"total", total}, {"ran", ran}, {"scored", all}};
  if (kind == "benchmark" && status == "passed" && !all) {
    const std::vector<std::string> gates_missing = gates.not_passed(required);
    if (!gates_missing.empty()) j["unscored_gates"] = gates_missing;
  }
  j["geomean_speedup"] = speedups.empty() ? nlohmann::json(nullptr)
                                          : nlohmann::json(SampleStatistics::geomean(speedups));
  return j;
}

nlohmann::json WorkerResult::incumbent_summary() const {
  std::vector<double> ratios;
  for (const auto& w : workloads)
    if (w.passed && w.incumbent_time_us && w.speedup_vs_incumbent > 0)
      ratios.push_back(w.speedup_vs_incumbent);
  return {{"sha256", incumbent_sha256},
          {"speedup_geomean", ratios.empty() ? nlohmann::json(nullptr)
                                             : nlohmann::json(SampleStatistics::geomean(ratios))},
          {"workloads", ratios.size()}};
}

nlohmann::json WorkerResult::to_json() const {
  nlohmann::json j = {{"status", status}, {"stage", stage}, {"kind", kind}};
  if (status != "passed" && !error.empty()) j["error"] = error;
  j["task"] = {{"name", task_name}, {"sha256", task_sha256}};
  j["candidate_sha256"] = candidate_sha256;
  if (gpu) j["gpu"] = gpu->to_json();
  if (build) {
    j["build"] = {{"seconds", build->seconds},
                  {"cached", build->cached},
                  {"log", build->log},
                  {"registers", build->ptxas.max_registers()},
                  {"spills", build->ptxas.total_spill_bytes()},
                  {"kernels", build->ptxas.to_json()}};
  }
  j["gates"] = gates.to_json(required_gates(kind));
  nlohmann::json list = nlohmann::json::array();
  for (const auto& w : workloads) list.push_back(w.to_json());
  j["workloads"] = list;
  j["summary"] = summary();
  if (!incumbent_sha256.empty()) j["incumbent"] = incumbent_summary();
  if (!profile.is_null()) j["profile"] = profile;
  if (!sanitize.is_null()) j["sanitize"] = sanitize;
  if (!isolation.is_null()) j["isolation"] = isolation;
  if (!wall_time.is_null()) j["wall_time"] = wall_time;
  if (!notes.empty()) j["notes"] = notes;
  return j;
}

}  // namespace kiln::worker
