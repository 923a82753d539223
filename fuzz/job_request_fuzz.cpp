// Fuzz target: the runner's job request parser (kiln_runner), as `kiln runner` reads the body of
// POST /v1/jobs from any client that holds its token. The input is the body; what the server
// reads as JSON (parse_json_bounded) goes through parse_job_request.
//
// Properties: the parser never throws out or crashes; a refusal says why and serializes
// into the runner's JSON error reply; an accepted job keeps its promises: its limits within the
// protocol's bounds and job_seconds within the server's, task files only at safe relative
// paths with task.json among them, hashes as 64 lowercase hex digits.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "fuzz_check.h"
#include "kiln/runner/job_request.h"

using kiln::fuzz::check;
using kiln::fuzz::check_wire;

namespace {

constexpr double kServerJobSeconds = 600;

bool is_relative_and_inside(const std::string& path) {
  if (path.empty() || path.front() == '/') return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto body = kiln::parse_json_bounded(text);  // as runner_server reads the body
  if (!body) return 0;
  auto parsed = kiln::runner::parse_job_request(*body, kServerJobSeconds);
  if (auto* error = std::get_if<kiln::runner::FieldError>(&parsed)) {
    check(!error->message.empty(), "a refusal says why");
    nlohmann::json reply{{"error", error->text()}};  // as runner_server's reply_error
    if (!error->field.empty()) reply["field"] = error->field;
    check_wire(reply, "a refusal is a JSON reply");
    return 0;
  }
  const kiln::runner::JobRequest& job = std::get<kiln::runner::JobRequest>(parsed);
  check(kiln::runner::protocol::within_bounds(job.limits), "the limits are within the bounds");
  check(job.limits.job_seconds <= kServerJobSeconds, "job_seconds is within the server's");
  check(job.task_files.count("task.json") == 1, "the task files hold task.json");
  for (const auto& [name, contents] : job.task_files)
    check(is_relative_and_inside(name), "every task file stays inside the bundle");
  check(kiln::runner::is_sha256_hex(job.task_sha256) &&
            kiln::runner::is_sha256_hex(job.candidate_sha256),
        "the hashes are SHA-256 hex");
  check(!job.candidate_source.empty(), "the candidate has a source");
  check_wire(kiln::runner::limits_to_json(job.limits), "the limits are JSON");
  return 0;
}
