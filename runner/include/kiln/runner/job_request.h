// POST /v1/jobs: the job a client asks for, checked field by field before any work.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "kiln/base/json_field.h"
#include "kiln/runner/job_state.h"
#include "kiln/runner/protocol/job_limits.h"

namespace kiln::runner {

// How long and how hard a job may measure (kiln/runner/protocol/job_limits.h). A client may
// ask for less than the server's maximum (job_seconds) and tune the sampling within the
// protocol's bounds.
using protocol::JobLimits;

// `limits` as job.json carries it to the worker.
nlohmann::json limits_to_json(const JobLimits& limits);

struct JobRequest {
  JobKind kind = JobKind::kBenchmark;
  std::string task_name;
  std::string task_sha256;                        // as the client claims it
  std::map<std::string, std::string> task_files;  // bundle-relative name -> contents
  std::string candidate_source;
  std::string candidate_sha256;  // as the client claims it
  // Kind benchmark, optional: the frontier's best, timed beside the candidate in every sample.
  std::string incumbent_source;        // empty: none
  std::string incumbent_sha256;        // as the client claims it
  std::vector<std::string> workloads;  // empty: all of the task's
  JobLimits limits;
  std::string profile_workload;             // kind=profile only
  std::vector<std::string> sanitize_tools;  // kind=sanitize only
  std::string sanitize_workload;            // kind=sanitize; empty: the worker picks the smallest
};

// A request that cannot be run: which field ("candidate.sha256", "workloads[2]", "" for the
// body as a whole), and what was wrong with it; text() is "FIELD: MESSAGE".
using FieldError = JsonFieldError;

// Checks the shape of the body (types, names, sizes); the hashes and the task's own
// validity are checked later, against the files. `max_job_seconds` caps limits.job_seconds.
std::variant<JobRequest, FieldError> parse_job_request(const nlohmann::json& body,
                                                       double max_job_seconds);

bool is_sha256_hex(const std::string& text);

}  // namespace kiln::runner
