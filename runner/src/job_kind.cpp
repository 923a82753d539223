#include "kiln/runner/job_kind.h"

#include <array>

namespace kiln::runner {

std::string_view kind_name(JobKind kind) {
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

std::optional<JobKind> parse_kind(std::string_view name) {
  for (JobKind kind :
       {JobKind::kVerify, JobKind::kBenchmark, JobKind::kProfile, JobKind::kSanitize})
    if (kind_name(kind) == name) return kind;
  return std::nullopt;
}

std::string_view state_name(JobState state) {
  switch (state) {
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kFinished:
      return "finished";
    case JobState::kCancelled:
      return "cancelled";
  }
  return "?";
}

bool is_final(JobState state) {
  return state == JobState::kFinished || state == JobState::kCancelled;
}

bool is_known_stage(std::string_view stage) {
  static constexpr std::array<std::string_view, 8> kStages = {
      "start", "build", "load", "verify", "timing", "profile", "sanitize", "done"};
  for (auto known : kStages)
    if (known == stage) return true;
  return false;
}

}  // namespace kiln::runner
