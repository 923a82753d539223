#include "kiln/runner/job_state.h"

namespace kiln::runner {

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

}  // namespace kiln::runner
