// The worker's stdout (runner/protocol/PROTOCOL.md, "Worker contract"): one JSON object per
// line, {"event": TYPE, ...}, the last one {"event": "result", "result": RESULT}. kiln-worker
// writes these lines and the server's WorkerOutput reads them.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace kiln::runner::protocol {

namespace event {
inline constexpr std::string_view kKey = "event";  // every line's type
inline constexpr std::string_view kStage = "stage";
inline constexpr std::string_view kProgress = "progress";
inline constexpr std::string_view kLog = "log";
inline constexpr std::string_view kResult = "result";  // the last line; not an event of the job
}  // namespace event

// Worker stages in the order a job passes them (the `stage` of stage events and of a RESULT).
inline constexpr std::array<std::string_view, 7> kWorkerStages = {
    "build", "load", "verify", "timing", "profile", "sanitize", "done"};
// The server's stage for a job whose worker has announced none yet.
inline constexpr std::string_view kStartStage = "start";

// A log event's levels.
inline constexpr std::array<std::string_view, 3> kLogLevels = {"info", "warning", "error"};

// A RESULT's `status`.
namespace status {
inline constexpr std::string_view kPassed = "passed";
inline constexpr std::string_view kFailed = "failed";
inline constexpr std::string_view kError = "error";
}  // namespace status

// A stdout line longer than this makes the output untrusted; messages are clipped to the other.
inline constexpr size_t kMaxEventLineBytes = size_t{8} << 20;
inline constexpr size_t kMaxEventMessageBytes = 4000;

constexpr bool is_worker_stage(std::string_view stage) {
  for (auto known : kWorkerStages)
    if (known == stage) return true;
  return false;
}

}  // namespace kiln::runner::protocol
