#include "kiln/mcp/log_level.h"

#include <array>

namespace kiln::mcp {
namespace {
constexpr std::array<std::string_view, 8> kNames = {"debug", "info",     "notice", "warning",
                                                    "error", "critical", "alert",  "emergency"};
}

std::optional<LogLevel> parse_log_level(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<LogLevel>(i);
  return std::nullopt;
}

std::string_view log_level_name(LogLevel level) { return kNames[static_cast<size_t>(level)]; }

}  // namespace kiln::mcp
