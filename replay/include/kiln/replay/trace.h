// A recorded session as a person reads it (`kiln trace SESSION.jsonl`): each tool call with its
// main arguments, how long it took, its outcome (pass, fail, isError or a JSON-RPC error, with
// the first line of what it said) and, for a benchmark, the geomean speedup; then the totals per
// tool (the frontier's ToolCallStats, as the run report counts them) and the longest calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kiln/frontier/session_stats.h"
#include "kiln/replay/recording.h"

namespace kiln::replay {

enum class CallOutcome {
  kPass,       // a result, and nothing in it says the work failed
  kFail,       // a result whose work failed without isError (ok/passed false, status failed)
  kToolError,  // a result with isError
  kRpcError,   // a JSON-RPC error
  kNoAnswer,   // cancelled, or the session ended first
};

const char* call_outcome_name(CallOutcome outcome);  // "pass", "fail", "isError", ...

struct TracedCall {
  size_t line = 0;
  std::string session;
  std::string tool;
  std::string arguments;  // the main ones, shortened: "candidate=.../kernel.cu workloads=[...]"
  std::string ts;         // when it was sent, as recorded
  std::optional<double> seconds;
  CallOutcome outcome = CallOutcome::kNoAnswer;
  std::string message;            // the first line of what the answer said
  std::optional<double> geomean;  // a benchmark's geomean speedup
};

struct Trace {
  std::string recording;
  size_t sessions = 0;        // initialize or server/discover requests
  size_t other_requests = 0;  // requests that are not tool calls
  int64_t first_ms = 0, last_ms = 0;
  std::vector<TracedCall> calls;
  std::vector<frontier::ToolCallStats> tools;  // most called first
  std::vector<std::string> warnings;           // lines the reader skipped
};

Trace build_trace(const Recording& recording);
// Plain text; `longest` is how many of the longest calls are listed at the end.
std::string format_trace(const Trace& trace, size_t longest = 5);
nlohmann::json trace_json(const Trace& trace);

}  // namespace kiln::replay
