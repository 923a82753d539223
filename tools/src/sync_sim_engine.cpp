#include "sync_sim_engine.h"

#include "check_report_output.h"
#include "sim_checker_run.h"

namespace kiln::tools {

using json = nlohmann::json;

namespace {

// The check kind of a dynamic synccheck kind (dynamic_synccheck.h): the static engine's where
// it has one, its own otherwise; Incomplete for a kind this kiln does not know.
check::FindingKind sync_kind(const std::string& kind) {
  using K = check::FindingKind;
  static const std::pair<const char*, K> kKinds[] = {
      {"barrier_divergence", K::BarrierDivergence},
      {"barrier_count_mismatch", K::NamedBarrierMismatch},
      {"uninitialized_mbarrier", K::MbarrierUninitialized},
      {"exit_at_barrier", K::ExitAtBarrier},
      {"phase_overrun", K::MbarrierPhaseOverrun},
      {"over_arrival", K::MbarrierOverArrival},
      {"tx_never_arrived", K::MbarrierTxNeverArrived},
      {"tx_overflow", K::MbarrierTxOverflow},
      {"init_in_use", K::MbarrierInitInUse},
      {"inval_in_use", K::MbarrierInitInUse},
      {"mid_phase_at_exit", K::MbarrierMidPhaseAtExit},
      {"deadlock", K::Deadlock}};
  for (const auto& [name, value] : kKinds)
    if (kind == name) return value;
  return K::Incomplete;
}

}  // namespace

check::Finding sync_finding(const json& finding,
                            const std::function<std::string(std::string)>& shorten) {
  check::Finding f;
  const std::string kind = finding.value("kind", "synchronization");
  f.kind = sync_kind(kind);
  f.severity = check::Severity::Error;
  f.function = finding.value("kernel", "");
  const json site = finding.value("site", json::object());
  set_source_location(shorten(site.value("source", "")), &f);
  f.ptx_line = site.value("ptx_line", 0u);
  f.instruction = site.value("instruction", "");
  f.message = kind + ": " + shorten(finding.value("message", ""));
  if (finding.contains("earlier")) {
    const json& e = finding["earlier"];
    std::string where = shorten(e.value("source", ""));
    if (where.empty()) where = "PTX line " + std::to_string(e.value("ptx_line", 0));
    f.message += "; the earlier operation: " + e.value("instruction", "") + " at " + where;
  }
  std::string schedules;
  for (const auto& s : finding.value("schedules", json::array()))
    schedules += (schedules.empty() ? "" : ", ") + s.get<std::string>();
  f.message += "; seen under schedule(s) " + schedules;
  f.fix_hint = finding.value("fix", "");
  f.cause = kind;
  return f;
}

SimSyncRun run_sim_synccheck(const SimulateToolConfig& config, const tasks::Task& task,
                             const Candidate& candidate, const json& arguments,
                             mcp::CallContext& context) {
  SimChecker checker;
  checker.mode = "synccheck";
  checker.work = "sync check";
  checker.checker = "checker";
  checker.no_sim_engine = "use engine \"static\" or \"gpu\"";
  checker.default_schedules = kDefaultSyncSchedules;
  SimCheckerRun run = run_sim_checker(config, task, candidate, arguments, context, checker);
  if (run.refusal) {
    SimSyncRun refused;
    refused.refusal = std::move(run.refusal);
    return refused;
  }
  const json& report = run.report;
  const PathShortener& shorten = run.shorten;
  const int schedules = run.schedules;
  const uint64_t seed = run.seed;
  SimSyncRun out;
  auto shorten_fn = [&shorten](std::string text) { return shorten(std::move(text)); };
  for (const auto& f : report.value("findings", json::array())) {
    out.report.findings.push_back(sync_finding(f, shorten_fn));
    out.kinds.push_back(f.value("kind", ""));
  }
  for (const auto& note : report.value("notes", json::array()))
    out.report.notes.push_back(shorten(note.get<std::string>()));
  const json coverage = report.value("coverage", json::object());
  if (coverage.value("launches", 1) == 0)
    out.report.notes.push_back(
        "the candidate launched no kernel under the checker, so nothing was checked");
  out.report.finish();
  if (report.value("verdict", "") == "incomplete" && out.report.findings.empty())
    out.report.verdict = check::Verdict::Incomplete;
  out.uniform_barriers = coverage.value("uniform_barriers", uint64_t{0});
  out.schedules = schedules;
  out.extra = {{"schedules", report.value("schedules", json::array()).size()},
               {"seed", seed},
               {"exploration", exploration_summary(report)},
               {"coverage", coverage}};
  return out;
}

}  // namespace kiln::tools
