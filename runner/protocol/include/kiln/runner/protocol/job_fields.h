// The field names of the two job documents (runner/protocol/PROTOCOL.md): the body a client
// POSTs to /v1/jobs (written by kiln_runner's make_job_body, read by parse_job_request) and
// the job.json the server writes for its worker (read by kiln_worker_core's JobSpec). One
// spelling for both sides, so a renamed field cannot reach only one of them.
#pragma once

#include <cstddef>
#include <string_view>

namespace kiln::runner::protocol {

// The file the server writes into the job folder and names in `kiln-worker --job`.
inline constexpr std::string_view kJobFileName = "job.json";

// The most workloads one job may list (`workloads`; empty means all of the task's).
inline constexpr size_t kMaxJobWorkloads = 1024;

namespace job_field {
// In both documents.
inline constexpr std::string_view kKind = "kind";
inline constexpr std::string_view kTask = "task";  // {"name", "sha256", ...}
inline constexpr std::string_view kName = "name";
inline constexpr std::string_view kSha256 = "sha256";
inline constexpr std::string_view kWorkloads = "workloads";
inline constexpr std::string_view kLimits = "limits";      // protocol/job_limits.h
inline constexpr std::string_view kProfile = "profile";    // kind profile: {"workload"}
inline constexpr std::string_view kSanitize = "sanitize";  // kind sanitize: {"tools", "workload"}
inline constexpr std::string_view kWorkload = "workload";
inline constexpr std::string_view kTools = "tools";
// In the body: the candidate is {"source", "sha256"}, the task carries its "files".
inline constexpr std::string_view kCandidate = "candidate";  // in job.json: the kernel.cu path
inline constexpr std::string_view kSource = "source";
inline constexpr std::string_view kFiles = "files";
// Kind benchmark, optional: the frontier's current best, {"source", "sha256"} in the body, its
// kernel.cu path in job.json. It is timed beside the candidate in every sample (PROTOCOL.md).
inline constexpr std::string_view kIncumbent = "incumbent";
// In job.json only.
inline constexpr std::string_view kId = "id";
inline constexpr std::string_view kTaskDir = "task_dir";
inline constexpr std::string_view kCandidateSha256 = "candidate_sha256";
inline constexpr std::string_view kIncumbentSha256 = "incumbent_sha256";
inline constexpr std::string_view kBuildDir = "build_dir";
inline constexpr std::string_view kSeed = "seed";
}  // namespace job_field

}  // namespace kiln::runner::protocol
