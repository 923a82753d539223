// The server's check of a worker's RESULT before any client sees it: it must be for
// this job (task and candidate hashes), well formed (finite, non-negative numbers,
// p5 <= median <= p95), and consistent with itself (status against the gates and the
// workloads, speedup against the two medians, the summary against the rows). A worker
// that lies, or a candidate that corrupted the worker, yields an error result instead.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kiln/runner/job_state.h"

namespace kiln::runner {

struct ResultExpectations {
  JobKind kind = JobKind::kBenchmark;
  std::string task_name;
  std::string task_sha256;
  std::string candidate_sha256;
  std::string incumbent_sha256;             // empty: the job timed no incumbent
  std::vector<std::string> task_workloads;  // every workload of the task, in order
  std::vector<std::string> requested;       // the job's workloads; empty: all
  std::string profile_workload;             // kind=profile
};

// Nullopt when the RESULT may be passed on; else what is wrong with it.
std::optional<std::string> check_result(const nlohmann::json& result,
                                        const ResultExpectations& expect);

// Why the server, not the worker, ended a job.
enum class Failure {
  kTimeout,
  kCancelled,
  kCrashed,
  kExitCode,
  kNoResult,
  kBadOutput,
  kInvalidResult,
  kSpawn,
  kScheduler  // the cluster scheduler (Slurm) ended or refused the job
};
std::string failure_reason(Failure failure);  // "timeout", "cancelled", ... (the RESULT's `reason`)

// A RESULT with status "error" written by the server: {"status", "stage", "error",
// "reason", "task", "candidate_sha256", "log_tail"?}.
nlohmann::json make_error_result(const ResultExpectations& expect, const std::string& stage,
                                 Failure failure, const std::string& error,
                                 const std::string& log_tail);

}  // namespace kiln::runner
