// racecheck's sim engine: the candidate's sim workloads under the simulator's race detector
// (`kiln-sim-run --racecheck`, engines/check/README.md), once per warp schedule, on this CPU.
// Its races become the check tools' findings (kiln/check/finding.h), kind data_race.
#pragma once

#include <nlohmann/json.hpp>

#include "kiln/check/finding.h"
#include "kiln/mcp/call_context.h"
#include "kiln/mcp/tool.h"
#include "kiln/tasks/task.h"
#include "kiln/tools/candidate_source.h"
#include "kiln/tools/tool_factories.h"

namespace kiln::tools {

inline constexpr int kDefaultRaceSchedules = 3;
inline constexpr int kMaxRaceSchedules = 64;  // exhaustive: 4 warps have 24 orders

// One of kiln-sim-run's race findings as a check Finding; `shorten` maps the temporary source
// path back to the name the agent used.
check::Finding race_finding(const nlohmann::json& race,
                            const std::function<std::string(std::string)>& shorten);

// The whole engine: arguments (schedules, seed, workloads, time_limit_s, limit, offset), the
// kiln-sim-run child, and its report as the tool's result.
mcp::ToolResult run_sim_racecheck(const SimulateToolConfig& config, const tasks::Task& task,
                                  const Candidate& candidate, const nlohmann::json& arguments,
                                  mcp::CallContext& context);

}  // namespace kiln::tools
