#include "kiln/runner/result_check.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <span>
#include <string_view>

#include "kiln/runner/protocol/gates.h"

namespace kiln::runner {

using json = nlohmann::json;

namespace {

struct Invalid {
  std::string problem;
};

[[noreturn]] void invalid(std::string problem) { throw Invalid{std::move(problem)}; }

const json& member(const json& object, const std::string& where, const char* key) {
  if (!object.contains(key)) invalid(where + "." + key + " is missing");
  return object.at(key);
}

std::string string_member(const json& object, const std::string& where, const char* key) {
  const json& value = member(object, where, key);
  if (!value.is_string()) invalid(where + "." + key + " is not a string");
  return value.get<std::string>();
}

bool bool_member(const json& object, const std::string& where, const char* key) {
  const json& value = member(object, where, key);
  if (!value.is_boolean()) invalid(where + "." + key + " is not true or false");
  return value.get<bool>();
}

double finite_number(const json& value, const std::string& where, double low = 0) {
  if (!value.is_number()) invalid(where + " is not a number (" + value.dump().substr(0, 40) + ")");
  double number = value.get<double>();
  if (!std::isfinite(number) || number < low)
    invalid(where + " = " + value.dump() + " is not a finite number >= " + json(low).dump());
  return number;
}

int64_t count_member(const json& object, const std::string& where, const char* key) {
  const json& value = member(object, where, key);
  if (!value.is_number_integer() || value.get<int64_t>() < 0)
    invalid(where + "." + key + " is not a count");
  return value.get<int64_t>();
}

// {"median", "p5", "p95", "cv", "samples"}; returns the median.
double check_timing(const json& timing, const std::string& where) {
  if (!timing.is_object()) invalid(where + " is not an object");
  double median = finite_number(member(timing, where, "median"), where + ".median");
  if (median <= 0) invalid(where + ".median is not positive");
  double p5 = finite_number(member(timing, where, "p5"), where + ".p5");
  double p95 = finite_number(member(timing, where, "p95"), where + ".p95");
  if (!(p5 <= median && median <= p95)) invalid(where + ": p5 <= median <= p95 does not hold");
  finite_number(member(timing, where, "cv"), where + ".cv");
  if (count_member(timing, where, "samples") < 1) invalid(where + ".samples is below 1");
  return median;
}

bool close_to(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b)) + 1e-12;
}

void check_errors(const json& errors, const std::string& where) {
  if (!errors.is_object()) invalid(where + " is not an object");
  for (const char* key : {"max_abs", "max_rel"})
    if (errors.contains(key) && !errors[key].is_null())
      finite_number(errors[key], where + "." + key);
  for (const char* key : {"mismatches", "nan", "inf"})
    if (errors.contains(key)) count_member(errors, where, key);
}

struct RowsSeen {
  size_t passed = 0;
  bool all_requested = false;
  std::vector<double> speedups;
  std::vector<double> vs_incumbent;  // passed rows timed beside the incumbent
};

RowsSeen check_workloads(const json& result, const ResultExpectations& expect, bool timed) {
  const json& rows = member(result, "result", "workloads");
  if (!rows.is_array()) invalid("result.workloads is not an array");
  const std::vector<std::string>& allowed =
      expect.requested.empty() ? expect.task_workloads : expect.requested;
  std::set<std::string> seen;
  RowsSeen out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::string where = "result.workloads[" + std::to_string(i) + "]";
    const json& row = rows[i];
    if (!row.is_object()) invalid(where + " is not an object");
    std::string name = string_member(row, where, "name");
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
      invalid(where + ".name '" + name + "' is not a workload this job asked for");
    if (!seen.insert(name).second) invalid(where + ".name '" + name + "' appears twice");
    bool passed = bool_member(row, where, "passed");
    if (row.contains("errors")) check_errors(row["errors"], where + ".errors");
    for (const char* key : {"tflops", "gbps", "pct_of_peak"})
      if (row.contains(key) && !row[key].is_null()) finite_number(row[key], where + "." + key);
    if (row.contains("pct_of_peak") && row["pct_of_peak"].is_number() &&
        row["pct_of_peak"].get<double>() > 110)
      invalid(where + ".pct_of_peak = " + row["pct_of_peak"].dump() + " exceeds the GPU's peak");
    if (!passed) continue;
    ++out.passed;
    if (!timed) continue;
    double median = check_timing(member(row, where, "time_us"), where + ".time_us");
    if (row.contains("baseline_time_us") && !row["baseline_time_us"].is_null()) {
      double baseline = check_timing(row["baseline_time_us"], where + ".baseline_time_us");
      double speedup = finite_number(member(row, where, "speedup"), where + ".speedup");
      if (!close_to(speedup, baseline / median, 0.01))
        invalid(where + ".speedup " + json(speedup).dump() +
                " differs from baseline median / median = " + json(baseline / median).dump());
      out.speedups.push_back(speedup);
    }
    if (row.contains("incumbent_time_us") && !row["incumbent_time_us"].is_null()) {
      if (expect.incumbent_sha256.empty())
        invalid(where + ".incumbent_time_us is there, but this job timed no incumbent");
      double incumbent = check_timing(row["incumbent_time_us"], where + ".incumbent_time_us");
      double ratio = finite_number(member(row, where, "speedup_vs_incumbent"),
                                   where + ".speedup_vs_incumbent");
      if (!close_to(ratio, incumbent / median, 0.01))
        invalid(where + ".speedup_vs_incumbent " + json(ratio).dump() +
                " differs from incumbent median / median = " + json(incumbent / median).dump());
      out.vs_incumbent.push_back(ratio);
    }
  }
  out.all_requested = seen.size() == allowed.size();
  return out;
}

// What the gates list says: whether any gate failed, and which gates passed. A gate's `state`
// (passed, failed, not_run) must agree with its `passed`; a gate that did not run is not a
// failure, but it never counts as passed.
struct GatesSeen {
  bool any_failed = false;
  std::set<std::string> passed;
};

GatesSeen check_gates(const json& result) {
  GatesSeen out;
  if (!result.contains("gates")) return out;
  const json& gates = result["gates"];
  if (!gates.is_array()) invalid("result.gates is not an array");
  std::set<std::string> names;
  for (size_t i = 0; i < gates.size(); ++i) {
    const std::string where = "result.gates[" + std::to_string(i) + "]";
    if (!gates[i].is_object()) invalid(where + " is not an object");
    const std::string name = string_member(gates[i], where, "name");
    if (!names.insert(name).second) invalid(where + ".name '" + name + "' appears twice");
    const bool passed = bool_member(gates[i], where, "passed");
    std::string state = passed ? "passed" : "failed";
    if (gates[i].contains("state")) {
      state = string_member(gates[i], where, "state");
      if (!protocol::is_gate_state(state))
        invalid(where + ".state '" + state + "' is not passed, failed or not_run");
      if ((state == protocol::gate_state::kPassed) != passed)
        invalid(where + ".state '" + state + "' disagrees with passed");
    }
    if (state == protocol::gate_state::kFailed) out.any_failed = true;
    if (state == protocol::gate_state::kPassed) out.passed.insert(name);
  }
  return out;
}

// A score needs every gate of the job kind's fixed set (runner/protocol/gates.h), passed.
void check_scored_gates(const GatesSeen& gates, JobKind kind) {
  const auto required = kind == JobKind::kBenchmark
                            ? std::span<const std::string_view>(protocol::kBenchmarkGates)
                            : std::span<const std::string_view>(protocol::kVerifyGates);
  for (std::string_view gate : required)
    if (gates.passed.count(std::string(gate)) == 0)
      invalid("result.summary.scored is true but gate " + std::string(gate) +
              " is missing or did not pass; a scored result carries every gate passed");
}

void check_summary(const json& result, const ResultExpectations& expect, const std::string& status,
                   const RowsSeen& rows, bool timed) {
  const json& summary = member(result, "result", "summary");
  if (!summary.is_object()) invalid("result.summary is not an object");
  const size_t total =
      expect.requested.empty() ? expect.task_workloads.size() : expect.requested.size();
  if (count_member(summary, "result.summary", "total") != static_cast<int64_t>(total))
    invalid("result.summary.total is not the " + std::to_string(total) + " workloads of this job");
  if (count_member(summary, "result.summary", "passed") != static_cast<int64_t>(rows.passed))
    invalid("result.summary.passed differs from the passed rows (" + std::to_string(rows.passed) +
            ")");
  bool every_task_workload =
      expect.requested.empty() ||
      std::all_of(expect.task_workloads.begin(), expect.task_workloads.end(),
                  [&](const std::string& w) {
                    return std::find(expect.requested.begin(), expect.requested.end(), w) !=
                           expect.requested.end();
                  });
  bool scored = bool_member(summary, "result.summary", "scored");
  bool may_score = status == "passed" && every_task_workload && rows.passed == total && timed &&
                   rows.speedups.size() == total;
  if (scored && !may_score)
    invalid(
        "result.summary.scored is true but not every workload of the task ran, was timed against "
        "the baseline and passed");
  if (scored) {
    double log_sum = 0;
    for (double s : rows.speedups) log_sum += std::log(s);
    double geomean = std::exp(log_sum / static_cast<double>(rows.speedups.size()));
    double claimed = finite_number(member(summary, "result.summary", "geomean_speedup"),
                                   "result.summary.geomean_speedup");
    if (!close_to(claimed, geomean, 0.01))
      invalid("result.summary.geomean_speedup " + json(claimed).dump() +
              " differs from the rows' geomean " + json(geomean).dump());
  }
}

// result.incumbent: this job's incumbent, and the geomean of the rows' ratios against it.
void check_incumbent(const json& result, const ResultExpectations& expect, const RowsSeen& rows) {
  if (expect.incumbent_sha256.empty()) {
    if (result.contains("incumbent")) invalid("result.incumbent is there, but this job has none");
    return;
  }
  const json& incumbent = member(result, "result", "incumbent");
  if (!incumbent.is_object()) invalid("result.incumbent is not an object");
  if (string_member(incumbent, "result.incumbent", "sha256") != expect.incumbent_sha256)
    invalid("result.incumbent.sha256 is not this job's incumbent (" + expect.incumbent_sha256 +
            ")");
  const json& claimed = member(incumbent, "result.incumbent", "speedup_geomean");
  if (rows.vs_incumbent.empty()) {
    if (!claimed.is_null()) invalid("result.incumbent.speedup_geomean has no rows behind it");
    return;
  }
  double log_sum = 0;
  for (double r : rows.vs_incumbent) log_sum += std::log(r);
  const double geomean = std::exp(log_sum / static_cast<double>(rows.vs_incumbent.size()));
  const double value = finite_number(claimed, "result.incumbent.speedup_geomean");
  if (!close_to(value, geomean, 0.01))
    invalid("result.incumbent.speedup_geomean " + json(value).dump() +
            " differs from the rows' geomean " + json(geomean).dump());
}

void check_profile(const json& result, const ResultExpectations& expect) {
  const json& profile = member(result, "result", "profile");
  if (!profile.is_object()) invalid("result.profile is not an object");
  if (string_member(profile, "result.profile", "workload") != expect.profile_workload)
    invalid("result.profile.workload is not the workload this job asked for ('" +
            expect.profile_workload + "')");
  const json& kernels = member(profile, "result.profile", "kernels");
  if (!kernels.is_array()) invalid("result.profile.kernels is not an array");
  for (size_t i = 0; i < kernels.size(); ++i) {
    const std::string where = "result.profile.kernels[" + std::to_string(i) + "]";
    if (!kernels[i].is_object()) invalid(where + " is not an object");
    string_member(kernels[i], where, "name");
    if (kernels[i].contains("metrics") && !kernels[i]["metrics"].is_object())
      invalid(where + ".metrics is not an object");
  }
}

void check(const json& result, const ResultExpectations& expect) {
  if (!result.is_object()) invalid("the result is not a JSON object");
  const std::string status = string_member(result, "result", "status");
  if (status != "passed" && status != "failed" && status != "error")
    invalid("result.status '" + status + "' is not passed, failed or error");
  string_member(result, "result", "stage");
  // A failed result's rows and gates say what failed; an error has only its message.
  if (status == "error" && string_member(result, "result", "error").empty())
    invalid("result.error is empty; an error result must say what went wrong");
  const json& task = member(result, "result", "task");
  if (!task.is_object()) invalid("result.task is not an object");
  if (string_member(task, "result.task", "sha256") != expect.task_sha256)
    invalid("result.task.sha256 is not this job's task (" + expect.task_sha256 + ")");
  if (string_member(task, "result.task", "name") != expect.task_name)
    invalid("result.task.name is not this job's task (" + expect.task_name + ")");
  if (string_member(result, "result", "candidate_sha256") != expect.candidate_sha256)
    invalid("result.candidate_sha256 is not this job's candidate (" + expect.candidate_sha256 +
            ")");
  if (status == "error") return;

  const GatesSeen gates = check_gates(result);
  const bool gates_passed = !gates.any_failed;
  if (status == "passed" && !gates_passed) invalid("result.status is passed but a gate failed");

  switch (expect.kind) {
    case JobKind::kVerify:
    case JobKind::kBenchmark: {
      bool timed = expect.kind == JobKind::kBenchmark;
      RowsSeen rows = check_workloads(result, expect, timed);
      size_t rows_total = member(result, "result", "workloads").size();
      if (status == "passed" && (!rows.all_requested || rows.passed != rows_total))
        invalid("result.status is passed but a workload failed or did not run");
      if (status == "failed" && gates_passed && rows.passed == rows_total && rows.all_requested)
        invalid("result.status is failed but every gate and workload passed");
      check_summary(result, expect, status, rows, timed);
      check_incumbent(result, expect, rows);
      if (result.at("summary").value("scored", false)) check_scored_gates(gates, expect.kind);
      break;
    }
    case JobKind::kProfile:
      if (status == "passed") check_profile(result, expect);
      break;
    case JobKind::kSanitize:
      break;
  }
}

}  // namespace

std::optional<std::string> check_result(const json& result, const ResultExpectations& expect) {
  try {
    check(result, expect);
    return std::nullopt;
  } catch (const Invalid& e) {
    return e.problem;
  } catch (const json::exception& e) {
    return std::string("the result could not be read: ") + e.what();
  }
}

std::string failure_reason(Failure failure) {
  switch (failure) {
    case Failure::kScheduler:
      return "scheduler";
    case Failure::kTimeout:
      return "timeout";
    case Failure::kCancelled:
      return "cancelled";
    case Failure::kCrashed:
      return "crashed";
    case Failure::kExitCode:
      return "exit_code";
    case Failure::kNoResult:
      return "no_result";
    case Failure::kBadOutput:
      return "bad_output";
    case Failure::kInvalidResult:
      return "invalid_result";
    case Failure::kSpawn:
      return "spawn_failed";
  }
  return "error";
}

json make_error_result(const ResultExpectations& expect, const std::string& stage, Failure failure,
                       const std::string& error, const std::string& log_tail) {
  json result{{"status", "error"},
              {"stage", stage},
              {"error", error},
              {"reason", failure_reason(failure)},
              {"task", {{"name", expect.task_name}, {"sha256", expect.task_sha256}}},
              {"candidate_sha256", expect.candidate_sha256}};
  if (!log_tail.empty()) result["log_tail"] = log_tail;
  return result;
}

}  // namespace kiln::runner
