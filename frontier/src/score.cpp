#include "kiln/frontier/score.h"

#include <algorithm>
#include <map>
#include <set>

#include "kiln/tasks/task.h"

namespace kiln::frontier {

using json = nlohmann::json;

namespace {

double number_at(const json& object, const char* key) {
  if (!object.is_object()) return 0;
  auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : 0;
}

}  // namespace

json to_json(const Score& score) {
  json rows = json::array();
  for (const auto& w : score.workloads)
    rows.push_back({{"name", w.name},
                    {"passed", w.passed},
                    {"speedup", w.speedup},
                    {"median_us", w.median_us},
                    {"cv", w.cv}});
  return {{"geomean", score.geomean},
          {"passed", score.passed},
          {"total", score.total},
          {"max_cv", score.max_cv},
          {"workloads", rows}};
}

Score score_from_json(const json& object) {
  Score score;
  if (!object.is_object()) return score;
  score.geomean = number_at(object, "geomean");
  score.passed = static_cast<size_t>(number_at(object, "passed"));
  score.total = static_cast<size_t>(number_at(object, "total"));
  score.max_cv = number_at(object, "max_cv");
  if (object.contains("workloads") && object["workloads"].is_array())
    for (const auto& row : object["workloads"])
      score.workloads.push_back({row.value("name", ""), row.value("passed", false),
                                 number_at(row, "speedup"), number_at(row, "median_us"),
                                 number_at(row, "cv")});
  return score;
}

std::vector<WorkloadScore> workload_rows(const json& result) {
  std::vector<WorkloadScore> rows;
  if (!result.is_object() || !result.contains("workloads") || !result["workloads"].is_array())
    return rows;
  for (const auto& row : result["workloads"]) {
    if (!row.is_object()) continue;
    WorkloadScore score;
    score.name = row.value("name", "");
    score.passed = row.value("passed", false) == true;
    score.speedup = number_at(row, "speedup");
    const json time = row.value("time_us", json::object());
    score.median_us = number_at(time, "median");
    score.cv = number_at(time, "cv");
    rows.push_back(std::move(score));
  }
  return rows;
}

std::string failing_gate(const json& result) {
  if (!result.is_object() || !result.contains("gates") || !result["gates"].is_array()) return "";
  for (const auto& gate : result["gates"]) {
    if (!gate.is_object() || gate.value("state", "") == "passed") continue;
    std::string detail = gate.value("detail", "");
    return gate.value("name", "?") + " (" + gate.value("state", "failed") +
           (detail.empty() ? "" : ": " + detail) + ")";
  }
  return "";
}

Result<Score> full_score(const StoredResult& stored, const tasks::Task& task,
                         const std::vector<std::string>& required_gates) {
  const std::string id = "result " + stored.id;
  if (stored.kind != "benchmark")
    return make_error(id + " is a " + stored.kind +
                      " result; only a benchmark result can go on the frontier: run benchmark "
                      "on the candidate and pass its result_id");
  if (stored.task_sha256 != task.sha256)
    return make_error(id + " was measured under task " + stored.task_name + " sha256 " +
                      stored.task_sha256.substr(0, 12) + "…, not this run's task " + task.name +
                      " sha256 " + task.sha256.substr(0, 12) +
                      "…; benchmark the candidate on this run's task");
  const json& result = stored.result;
  if (stored.status != "passed") {
    std::string why = failing_gate(result);
    return make_error(id + " did not pass (status " + stored.status + ")" +
                      (why.empty() ? "" : "; failing gate " + why) +
                      "; fix the candidate and benchmark it again");
  }
  // Every gate of the benchmark set present and passed (the runner checks this too).
  std::map<std::string, std::string> states;
  if (result.contains("gates") && result["gates"].is_array())
    for (const auto& gate : result["gates"])
      if (gate.is_object()) states[gate.value("name", "")] = gate.value("state", "");
  for (const auto& name : required_gates) {
    auto it = states.find(name);
    if (it == states.end())
      return make_error(id + " lacks the gate " + name +
                        ", so it is not scored; benchmark it again on a runner that checks "
                        "every gate");
    if (it->second != "passed")
      return make_error(
          id + ": gate " + name + " " + (it->second == "not_run" ? "did not run" : "failed") +
          ", so it is not scored (" + failing_gate(result) + "); fix that and benchmark again");
  }
  // Every workload of the task present and passed: a subset run is never a candidate.
  Score score;
  score.workloads = workload_rows(result);
  std::set<std::string> passed;
  for (const auto& row : score.workloads)
    if (row.passed) passed.insert(row.name);
  std::string missing;
  size_t missing_count = 0;
  for (const auto& workload : task.workloads)
    if (!passed.count(workload.name)) {
      if (++missing_count <= 3) missing += (missing.empty() ? "" : ", ") + workload.name;
    }
  if (missing_count > 0)
    return make_error(id + " covers " + std::to_string(passed.size()) + " of the task's " +
                      std::to_string(task.workloads.size()) + " workloads (missing " + missing +
                      (missing_count > 3 ? ", …" : "") +
                      "). Scoring commands can pass a subset; a candidate counts only when "
                      "every workload passes: benchmark without `workloads`");
  if (!stored.scored || !stored.geomean_speedup)
    return make_error(id + " is not scored (summary.scored is false); benchmark it again");
  score.geomean = *stored.geomean_speedup;
  score.total = task.workloads.size();
  score.passed = passed.size();
  for (const auto& row : score.workloads) score.max_cv = std::max(score.max_cv, row.cv);
  return score;
}

}  // namespace kiln::frontier
