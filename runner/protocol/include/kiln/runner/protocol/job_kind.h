// What a runner job does: the `kind` of a POST /v1/jobs body and of job.json
// (runner/protocol/PROTOCOL.md). The server, the worker and the MCP tools share these names.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace kiln::runner::protocol {

enum class JobKind { kVerify, kBenchmark, kProfile, kSanitize };

inline constexpr std::array<JobKind, 4> kJobKinds = {JobKind::kVerify, JobKind::kBenchmark,
                                                     JobKind::kProfile, JobKind::kSanitize};

// For messages that list the choices.
inline constexpr std::string_view kJobKindChoices = "verify, benchmark, profile or sanitize";

// The wire name. Each is a string literal, so data() is NUL-terminated.
constexpr std::string_view kind_name(JobKind kind) {
  switch (kind) {
    case JobKind::kVerify:
      return "verify";
    case JobKind::kBenchmark:
      return "benchmark";
    case JobKind::kProfile:
      return "profile";
    case JobKind::kSanitize:
      return "sanitize";
  }
  return "?";
}

// The kind a wire name stands for; nullopt for any other text (names are case-sensitive).
constexpr std::optional<JobKind> parse_kind(std::string_view name) {
  for (JobKind kind : kJobKinds)
    if (kind_name(kind) == name) return kind;
  return std::nullopt;
}

}  // namespace kiln::runner::protocol
