// The simulate tool's answer, made from kiln-sim-run's JSON report: per workload pass/fail,
// error statistics, the first mismatches, faults with their source lines, what the kernels
// printed (device printf, cut to a few KB), and the simulator's counts (instructions by class,
// bytes per memory space, bank conflicts, divergent branches), as structuredContent and as
// compact text under 10 KB.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "kiln/mcp/tool.h"

namespace kiln::tools {

inline constexpr size_t kMaxListedMismatches = 5;
inline constexpr size_t kMaxListedFaults = 5;
inline constexpr size_t kMaxSimulateText = 9500;
// Device printf text per workload: in structuredContent, and in the text answer.
inline constexpr size_t kMaxPrintfShown = 4000;
inline constexpr size_t kMaxPrintfInText = 1200;

// Rewrites temporary and absolute paths in kiln-sim-run's messages into the names the agent
// used ("worktree/candidates/a/kernel.cu" rather than "/tmp/kiln-simulate-x/kernel.cu").
class PathShortener {
 public:
  void add(std::string from, std::string to);
  std::string operator()(std::string text) const;

 private:
  std::vector<std::pair<std::string, std::string>> rules_;  // longest `from` first
};

// One workload of kiln-sim-run's report as the tool presents it.
nlohmann::json workload_summary(const nlohmann::json& workload, const PathShortener& shorten);

// "64x64x64 PASS ..." lines for one summarized workload, ending in '\n'.
std::string workload_text(const nlohmann::json& summary);

// The tool result for a report kiln-sim-run completed (ok: true). `header` names the
// candidate and task; isError unless every workload passed.
mcp::ToolResult simulate_result(const nlohmann::json& report, const std::string& candidate_name,
                                const PathShortener& shorten);

// What to do next after a report's failures (or after a pass).
std::string next_step(const nlohmann::json& workloads);

}  // namespace kiln::tools
