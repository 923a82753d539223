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

}  // namespace kiln::tools
