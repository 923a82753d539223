// job.json, as the runner server writes it for one worker (runner/protocol/PROTOCOL.md). The
// kinds, limits and their bounds, sanitize tools and field names are the protocol's
// (kiln_runner_protocol), the ones the server checked the client's request against.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/runner/protocol/job_kind.h"
#include "kiln/runner/protocol/job_limits.h"

namespace kiln::worker {

using runner::protocol::JobKind;
using runner::protocol::JobLimits;
using runner::protocol::kind_name;
using runner::protocol::parse_kind;

// The kind's wire name as a C string ("benchmark").
inline const char* job_kind_name(JobKind kind) { return kind_name(kind).data(); }

struct JobSpec {
  std::string id;
  JobKind kind = JobKind::kBenchmark;
  std::filesystem::path task_dir;
  std::filesystem::path candidate;
  std::filesystem::path build_dir;
  // Kind benchmark, optional: the frontier's current best, timed beside the candidate.
  std::filesystem::path incumbent;
  std::string incumbent_sha256;
  std::vector<std::string> workloads;  // empty: all
  uint64_t seed = 0;
  JobLimits limits;
  std::string profile_workload;             // kind=profile
  std::vector<std::string> sanitize_tools;  // kind=sanitize
  std::string sanitize_workload;            // optional (extension): default the smallest workload

  // Parses and checks the document; errors name the field
  // ("job.json: limits.min_samples: must be an integer between 1 and 100000, got 0").
  static Result<JobSpec> parse(const std::string& text);
  static Result<JobSpec> load(const std::filesystem::path& path);
};

}  // namespace kiln::worker
