// job.json, as the runner server writes it for one worker (runner/PROTOCOL.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::worker {

enum class JobKind { kVerify, kBenchmark, kProfile, kSanitize };

const char* job_kind_name(JobKind kind);

struct JobLimits {
  double job_seconds = 600;
  int64_t min_samples = 10;
  int64_t max_samples = 200;
  double target_rel_noise = 0.005;
  double sample_time_cap_seconds = 20;  // sampling time per workload
};

struct JobSpec {
  std::string id;
  JobKind kind = JobKind::kBenchmark;
  std::filesystem::path task_dir;
  std::filesystem::path candidate;
  std::filesystem::path build_dir;
  std::vector<std::string> workloads;  // empty: all
  uint64_t seed = 0;
  JobLimits limits;
  std::string profile_workload;             // kind=profile
  std::vector<std::string> sanitize_tools;  // kind=sanitize
  std::string sanitize_workload;            // optional (extension): default the smallest workload

  // Parses and checks the document; errors name the field ("limits.min_samples: must be >= 1").
  static Result<JobSpec> parse(const std::string& text);
  static Result<JobSpec> load(const std::filesystem::path& path);
};

}  // namespace kiln::worker
