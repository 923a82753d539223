// The tool calls of a run's recorded sessions (RUN/sessions/*.jsonl, written by `kiln mcp
// --record`: one JSON line per message, {"ts", "dir": "in"|"out", "session"?, "message"}),
// counted per tool: calls, errors (a JSON-RPC error or a result with isError), calls that never
// got an answer, and the time between each request and its answer. Read as plain JSON, so the
// frontier does not depend on mcp/; a line that is not a record is counted, never fatal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::frontier {

struct ToolCallStats {
  std::string tool;
  size_t calls = 0;
  size_t errors = 0;      // answered with isError or a JSON-RPC error
  size_t unanswered = 0;  // no answer in the recording (cancelled, or the session ended)
  double total_s = 0;     // summed over the answered calls
  double max_s = 0;
};

struct SessionStats {
  size_t files = 0;     // *.jsonl files read
  size_t sessions = 0;  // initialize requests seen
  size_t calls = 0;
  size_t errors = 0;
  size_t bad_lines = 0;  // lines that are not a recorded message
  int64_t first_ms = 0;  // the first and last timestamps seen (0: none)
  int64_t last_ms = 0;
  std::vector<ToolCallStats> tools;   // most called first
  std::vector<std::string> problems;  // files that could not be read, one line each
};

// Every *.jsonl file directly in `dir`; a missing folder is no sessions, not an error.
SessionStats read_session_stats(const std::filesystem::path& dir);

// "2026-11-29T19:14:02.894Z" as Unix milliseconds; nullopt when it is not that form.
std::optional<int64_t> parse_utc_ms(std::string_view text);

}  // namespace kiln::frontier
