// The vocabulary of runner jobs (runner/PROTOCOL.md): what a job does, where it is.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kiln::runner {

enum class JobKind { kVerify, kBenchmark, kProfile, kSanitize };

// A job is queued, then running, then finished (with a RESULT, whatever its status) or
// cancelled (by DELETE, or because the server stopped).
enum class JobState { kQueued, kRunning, kFinished, kCancelled };

std::string_view kind_name(JobKind kind);
std::optional<JobKind> parse_kind(std::string_view name);
std::string_view state_name(JobState state);
bool is_final(JobState state);

// Worker stages in the order a job passes them; "start" is the server's name for
// "no stage event seen yet".
bool is_known_stage(std::string_view stage);

}  // namespace kiln::runner
