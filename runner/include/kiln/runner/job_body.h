// The client's side of POST /v1/jobs: a job body built from a loaded task bundle and a
// candidate source, with the hashes the runner will check (runner/protocol/PROTOCOL.md; the
// field names are kiln/runner/protocol/job_fields.h's, which parse_job_request reads).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/runner/job_state.h"
#include "kiln/tasks/task.h"

namespace kiln::runner {

struct JobSpec {
  JobKind kind = JobKind::kBenchmark;
  std::string candidate_source;
  std::string incumbent_source;             // kind=benchmark, optional: timed beside the candidate
  std::vector<std::string> workloads;       // empty: all
  std::string profile_workload;             // kind=profile
  std::vector<std::string> sanitize_tools;  // kind=sanitize; empty: every tool
  std::string sanitize_workload;            // kind=sanitize; empty: the smallest
  std::optional<double> job_seconds;        // ask for less than the runner's maximum
};

// Reads the bundle's files (tasks::bundle_files) from task.dir. Errors name the file.
Result<nlohmann::json> make_job_body(const tasks::Task& task, const JobSpec& spec);

}  // namespace kiln::runner
