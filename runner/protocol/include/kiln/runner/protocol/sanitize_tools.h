// The compute-sanitizer tools a sanitize job may run: `sanitize.tools` of a POST /v1/jobs body
// and of job.json (runner/protocol/PROTOCOL.md). Absent, a sanitize job runs all four, in this
// order.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::runner::protocol {

inline constexpr std::array<std::string_view, 4> kSanitizeTools = {"memcheck", "racecheck",
                                                                   "synccheck", "initcheck"};

// For messages that list the choices.
inline constexpr std::string_view kSanitizeToolChoices =
    "memcheck, racecheck, synccheck or initcheck";

constexpr bool is_sanitize_tool(std::string_view name) {
  for (auto tool : kSanitizeTools)
    if (tool == name) return true;
  return false;
}

// Every tool, as a job's default list.
inline std::vector<std::string> all_sanitize_tools() {
  return {kSanitizeTools.begin(), kSanitizeTools.end()};
}

}  // namespace kiln::runner::protocol
