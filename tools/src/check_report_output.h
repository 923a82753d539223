// The output both check tools (synccheck, racecheck) give: a CheckReport as structuredContent
// and compact text, with limit/offset over the findings.
#pragma once

#include <string>

#include "kiln/check/finding.h"
#include "kiln/mcp/tool.h"

namespace kiln::tools {

struct CheckOutputOptions {
  std::string tool;    // "synccheck"
  std::string engine;  // "static" | "gpu"
  std::string where;   // "sm_90a" or "job j-12 on runner local"
  size_t limit = 20;
  size_t offset = 0;
  nlohmann::json extra = nlohmann::json::object();  // more structuredContent fields
};

mcp::ToolResult check_report_result(const check::CheckReport& report,
                                    const CheckOutputOptions& options);
// The outputSchema of a check tool.
nlohmann::json check_report_schema();
// The inputSchema of a check tool: the candidate (add_candidate_properties, with the deprecated
// `path`), task, workload, limit, offset, plus `extra` properties of its own.
nlohmann::json check_input_schema(const nlohmann::json& extra_properties);
// A check that could not run (bad argument, no runner, a candidate that does not build) as an
// isError result of a check tool. Findings are never a refusal: the check did its work.
mcp::ToolResult check_refusal(const std::string& engine, mcp::ErrorCode code,
                              const std::string& message, const std::string& next_step = "");

}  // namespace kiln::tools
