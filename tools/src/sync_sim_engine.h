// synccheck's sim engine: the candidate's sim workloads under the simulator's synchronization
// checker (`kiln-sim-run --synccheck`, engines/check/README.md "synccheck on the simulator"),
// once per warp schedule, on this CPU. Its findings become check Findings of their own kinds
// (mbarrier_phase_overrun, deadlock, ...; the static engine's kind where it has one); the
// dynamic kind (phase_overrun, ...) is each finding's `cause`.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kiln/check/finding.h"
#include "kiln/mcp/call_context.h"
#include "kiln/mcp/tool.h"
#include "kiln/tasks/task.h"
#include "kiln/tools/candidate_source.h"
#include "kiln/tools/tool_factories.h"

namespace kiln::tools {

inline constexpr int kDefaultSyncSchedules = 3;
inline constexpr int kMaxSyncSchedules = 64;

// One kiln-sim-run synccheck finding as a check Finding (its FindingKind, the dynamic kind as
// `cause`); `shorten` maps temporary paths back to the agent's names.
check::Finding sync_finding(const nlohmann::json& finding,
                            const std::function<std::string(std::string)>& shorten);

struct SimSyncRun {
  std::optional<mcp::ToolResult> refusal;  // the run could not be done
  check::CheckReport report;
  std::vector<std::string> kinds;                   // the dynamic kind of each report finding
  nlohmann::json extra = nlohmann::json::object();  // schedules, seed, coverage
  uint64_t uniform_barriers = 0;                    // bar.sync releases without divergence
  int schedules = 0;
};

// The engine: arguments (schedules, seed, workloads, time_limit_s), the kiln-sim-run child and
// its report.
SimSyncRun run_sim_synccheck(const SimulateToolConfig& config, const tasks::Task& task,
                             const Candidate& candidate, const nlohmann::json& arguments,
                             mcp::CallContext& context);

}  // namespace kiln::tools
