#include "kiln/frontier/run_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>

#include "kiln/frontier/result_store.h"
#include "kiln/frontier/score.h"

namespace kiln::frontier {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Far more than a run holds; list_recent needs a bound.
constexpr size_t kAllResults = 1'000'000;

size_t count_at(const json& result, const char* key) {
  if (!result.is_object() || !result.contains("summary") || !result["summary"].is_object())
    return 0;
  const json& value = result["summary"].value(key, json());
  return value.is_number_unsigned() ? value.get<size_t>() : 0;
}

// The geometric mean of the rows' speedups when every row passed (a subset benchmark, which is
// never scored but still shows where a candidate stands); nullopt otherwise.
std::optional<double> rows_geomean(const std::vector<WorkloadScore>& rows) {
  if (rows.empty()) return std::nullopt;
  double log_sum = 0;
  for (const auto& row : rows) {
    if (!row.passed || !(row.speedup > 0) || !std::isfinite(row.speedup)) return std::nullopt;
    log_sum += std::log(row.speedup);
  }
  return std::exp(log_sum / static_cast<double>(rows.size()));
}

ReportPoint point_of(const StoredResult& stored) {
  ReportPoint point;
  point.result_id = stored.id;
  point.created_ms = stored.created_ms;
  point.status = stored.status;
  point.scored = stored.scored;
  point.source_path = stored.source_path;
  const auto rows = workload_rows(stored.result);
  point.total = count_at(stored.result, "total");
  if (point.total == 0) point.total = rows.size();
  point.passed = count_at(stored.result, "passed");
  if (stored.scored && stored.geomean_speedup && std::isfinite(*stored.geomean_speedup))
    point.geomean = stored.geomean_speedup;
  else if (stored.status == "passed")
    point.geomean = rows_geomean(rows);
  point.failing_gate = failing_gate(stored.result);
  if (point.failing_gate.empty() && stored.result.is_object() &&
      stored.result.value("error", json()).is_string())
    point.failing_gate = stored.result["error"].get<std::string>();
  return point;
}

// Marks each point with the member it measured and the frontier's decision about it.
void mark_points(std::vector<ReportPoint>& points, const std::vector<Member>& members,
                 const std::vector<Decision>& decisions) {
  std::map<std::string, ReportPoint*> by_id;
  for (auto& p : points) by_id[p.result_id] = &p;
  for (const auto& m : members) {
    for (const std::string* id : {&m.result_id, &m.revalidation_id}) {
      auto it = by_id.find(*id);
      if (id->empty() || it == by_id.end()) continue;
      it->second->member = m.name;
      it->second->member_active = m.active;
      it->second->best = m.active && m.best;
      if (id == &m.revalidation_id) it->second->revalidation = true;
    }
  }
  // decisions are newest first: the first one seen for a result is its newest.
  for (const auto& d : decisions) {
    if (auto it = by_id.find(d.revalidation_id); !d.revalidation_id.empty() && it != by_id.end())
      it->second->revalidation = true;
    auto it = by_id.find(d.result_id);
    if (it == by_id.end() || !it->second->verdict.empty()) continue;
    it->second->verdict = d.verdict;
    it->second->verdict_reason = d.reason;
  }
}

}  // namespace

Result<RunReport> load_run_report(const fs::path& run_dir, const ReportOptions& options) {
  RunReport report;
  report.run_dir = run_dir;
  report.generated_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  std::error_code error;
  if (!fs::exists(run_dir / kManifestFile, error)) {
    return make_error(run_dir.string() +
                      " is not a run directory (no manifest.json); pass the folder `kiln setup` "
                      "made, e.g. `kiln report runs/RUN`");
  }
  auto manifest = read_manifest(run_dir);
  if (!manifest) return manifest.error();
  report.manifest = *manifest;
  report.sessions = read_session_stats(run_dir / "sessions");
  for (const auto& problem : report.sessions.problems) report.notes.push_back(problem);

  const fs::path store_path = default_store_path(run_dir);
  if (!fs::exists(store_path, error)) {
    report.notes.push_back("no results yet: " + store_path.string() +
                           " does not exist; benchmark a candidate in this run (the benchmark "
                           "tool of `kiln mcp --run-dir`) and run `kiln report` again");
    return report;
  }
  auto store = ResultStore::open(store_path);
  if (!store) return store.error();
  auto table = FrontierTable::open(store_path);
  if (!table) return table.error();
  const std::string& task = report.manifest.task_sha256;

  RecentQuery query;
  query.kind = "benchmark";
  query.limit = kAllResults;
  auto all = (*store)->list_recent(query);
  if (!all) return all.error();
  for (auto it = all->rbegin(); it != all->rend(); ++it) {
    if (it->task_sha256 == task)
      report.points.push_back(point_of(*it));
    else
      ++report.other_task_results;
  }
  if (report.other_task_results > 0) {
    report.notes.push_back(std::to_string(report.other_task_results) +
                           " stored benchmark result(s) were measured under another task hash "
                           "than the manifest's and are left out");
  }

  auto members = (*table)->members(task);
  if (!members) return members.error();
  auto decisions = (*table)->decisions(task, kAllResults, 0);
  if (!decisions) return decisions.error();
  mark_points(report.points, *members, *decisions);
  report.decision_count = decisions->size();
  for (size_t i = 0; i < decisions->size() && i < options.decision_limit; ++i)
    report.decisions.push_back((*decisions)[i]);

  for (const auto& m : *members) (m.active ? report.members : report.former).push_back(m);
  std::stable_sort(report.members.begin(), report.members.end(),
                   [](const Member& a, const Member& b) {
                     if (a.best != b.best) return a.best;
                     return a.reference_geomean() > b.reference_geomean();
                   });
  std::reverse(report.former.begin(), report.former.end());
  for (const auto& m : report.members)
    if (m.best) report.best = m;
  if (report.points.empty())
    report.notes.emplace_back(
        "no benchmark results yet: benchmark a candidate in this run and run "
        "`kiln report` again");
  return report;
}

}  // namespace kiln::frontier
