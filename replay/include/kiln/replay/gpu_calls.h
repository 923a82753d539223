// Which recorded calls need a GPU runner to be replayed. Without one (KILN_RUNNER unset) they
// are not sent, and their verdict is "not replayed (no GPU)": a replay on a machine without a
// GPU says nothing about them either way.
#pragma once

#include <set>
#include <string>

#include "kiln/replay/recording.h"

namespace kiln::replay {

// benchmark, profile, record_candidate (its revalidation is a benchmark), synccheck or
// racecheck on engine "gpu" (asked for, or what the recorded answer says ran), wait_job on a
// job one of those started (`gpu_jobs`), or any call whose recorded answer was the no_runner
// error.
bool needs_gpu(const Record& request, const Record* answer, const std::set<std::string>& gpu_jobs);

// The job id a recorded answer hands back (structuredContent.job_id), or "".
std::string answered_job_id(const Record* answer);

}  // namespace kiln::replay
