// The syslog severities MCP uses for logging/setLevel and notifications/message.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kiln::mcp {

enum class LogLevel { kDebug, kInfo, kNotice, kWarning, kError, kCritical, kAlert, kEmergency };

std::optional<LogLevel> parse_log_level(std::string_view name);
std::string_view log_level_name(LogLevel level);

}  // namespace kiln::mcp
