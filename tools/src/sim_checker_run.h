// A checker of the simulator (racecheck's or synccheck's sim engine) run for one tool call:
// its arguments checked (schedules, explore, depth, seed, workloads, time_limit_s), the candidate
// written into a fresh folder, `kiln-sim-run --racecheck|--synccheck` run with progress per
// workload and schedule, and its final report read. The engines turn the report's findings into
// check Findings; everything up to there is the same for both, and lives here.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "kiln/mcp/call_context.h"
#include "kiln/mcp/tool.h"
#include "kiln/tasks/task.h"
#include "kiln/tools/candidate_source.h"
#include "kiln/tools/tool_factories.h"
#include "sim_report.h"

namespace kiln::check {
struct Finding;
}

namespace kiln::tools {

struct SimChecker {
  std::string mode;           // "racecheck" or "synccheck": the flag and the progress event
  std::string work;           // "race check": in messages ("the race check was stopped")
  std::string checker;        // "detector": in progress ("built; running the detector")
  std::string no_sim_engine;  // the next step when the task has no sim workloads
  int default_schedules = 3;
  // Appended to a workload's progress line (", 2 race(s)"); may be empty.
  std::function<std::string(const nlohmann::json& event)> progress_detail;
};

struct SimCheckerRun {
  std::optional<mcp::ToolResult> refusal;  // the run could not be done, or its report says so
  nlohmann::json report;                   // kiln-sim-run's report (ok: true) otherwise
  PathShortener shorten;                   // the call's temporary paths -> the agent's names
  int schedules = 0;
  uint64_t seed = 0;
  std::string explore;  // "random", "pct", "exhaustive"
};

// The arguments both sim checkers take: schedules, explore, depth, seed, workloads and
// time_limit_s (their schema properties).
nlohmann::json sim_checker_properties(int max_schedules);

SimCheckerRun run_sim_checker(const SimulateToolConfig& config, const tasks::Task& task,
                              const Candidate& candidate, const nlohmann::json& arguments,
                              mcp::CallContext& context, const SimChecker& checker);

// kiln-sim-run's exploration summary (kind, ran, distinct, depth, orders, exhausted) with
// `found`: each schedule that found something first, as {"schedule": "pct:2", "findings": 1}.
nlohmann::json exploration_summary(const nlohmann::json& report);

// "kernel.cu:47:7" (or "kernel.cu:47") into the finding's file, line and column.
void set_source_location(const std::string& text, check::Finding* finding);

}  // namespace kiln::tools
