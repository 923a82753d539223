#include "race_sim_engine.h"

#include <algorithm>
#include <cctype>

#include "check_report_output.h"
#include "sim_checker_run.h"

namespace kiln::tools {

using json = nlohmann::json;

namespace {

std::string side_text(const json& side, const std::function<std::string(std::string)>& shorten) {
  std::string where = side.value("source", "");
  where = where.empty() ? "PTX line " + std::to_string(side.value("ptx_line", 0)) : shorten(where);
  return side.value("access", "access") + (side.value("async", false) ? " (async copy)" : "") +
         " at " + where + " (" + side.value("instruction", "") + ")";
}

std::string schedules_text(const json& race) {
  std::string out;
  for (const auto& s : race.value("schedules", json::array()))
    out += (out.empty() ? "" : ", ") + s.get<std::string>();
  return out;
}

}  // namespace

check::Finding race_finding(const json& race,
                            const std::function<std::string(std::string)>& shorten) {
  check::Finding f;
  const std::string cause = race.value("cause", "unordered");
  f.kind = cause == "async_proxy" || cause == "missing_proxy_fence"
               ? check::FindingKind::AsyncProxyRace
           : cause == "missing_fence" || cause == "narrow_scope" ? check::FindingKind::MissingFence
                                                                 : check::FindingKind::DataRace;
  f.cause = cause;
  f.severity = check::Severity::Error;
  f.function = race.value("kernel", "");
  const json& first = race.contains("first") ? race["first"] : json::object();
  const json& second = race.contains("second") ? race["second"] : json::object();
  set_source_location(shorten(second.value("source", "")), &f);
  f.ptx_line = second.value("ptx_line", 0u);
  f.instruction = second.value("instruction", "");
  std::string kind = race.value("kind", "race");
  std::transform(kind.begin(), kind.end(), kind.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  f.message = kind + " race (" + cause + ") on " + std::to_string(race.value("bytes", 0)) +
              " byte(s) of " + race.value("space", "memory") + " memory at " +
              race.value("address", "?") + ": " + side_text(first, shorten) +
              " is not ordered with the " + side_text(second, shorten) +
              "; seen under schedule(s) " + schedules_text(race) + " (" +
              std::to_string(race.value("occurrences", 0)) + " times)";
  f.fix_hint = race.value("fix", "");
  return f;
}

mcp::ToolResult run_sim_racecheck(const SimulateToolConfig& config, const tasks::Task& task,
                                  const Candidate& candidate, const json& arguments,
                                  mcp::CallContext& context) {
  SimChecker checker;
  checker.mode = "racecheck";
  checker.work = "race check";
  checker.checker = "detector";
  checker.no_sim_engine = "use engine \"gpu\" (compute-sanitizer on a runner)";
  checker.default_schedules = kDefaultRaceSchedules;
  checker.progress_detail = [](const json& event) {
    return ", " + std::to_string(event.value("findings", 0)) + " race(s)";
  };
  SimCheckerRun run = run_sim_checker(config, task, candidate, arguments, context, checker);
  if (run.refusal) return std::move(*run.refusal);
  const json& report = run.report;
  const PathShortener& shorten = run.shorten;
  const int schedules = run.schedules;
  const uint64_t seed = run.seed;

  check::CheckReport checked;
  auto shorten_fn = [&shorten](std::string text) { return shorten(std::move(text)); };
  for (const auto& race : report.value("findings", json::array()))
    checked.findings.push_back(race_finding(race, shorten_fn));
  for (const auto& note : report.value("notes", json::array()))
    checked.notes.push_back(shorten(note.get<std::string>()));
  if (report.value("coverage", json::object()).value("launches", 1) == 0)
    checked.notes.push_back(
        "the candidate launched no kernel under the detector, so nothing was checked");
  checked.finish();
  if (report.value("verdict", "") == "incomplete" && checked.findings.empty())
    checked.verdict = check::Verdict::Incomplete;

  CheckOutputOptions output;
  output.tool = "racecheck";
  output.engine = "sim";
  output.where = "the simulator, " + std::to_string(schedules) + " schedule(s), seed " +
                 std::to_string(seed) +
                 (run.explore == "random" ? std::string() : ", explore " + run.explore);
  output.limit = arguments.value("limit", size_t{20});
  output.offset = arguments.value("offset", size_t{0});
  output.extra = {{"schedules", report.value("schedules", json::array()).size()},
                  {"seed", seed},
                  {"exploration", exploration_summary(report)},
                  {"coverage", report.value("coverage", json::object())}};
  return check_report_result(checked, output);
}

}  // namespace kiln::tools
