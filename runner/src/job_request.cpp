#include "kiln/runner/job_request.h"

#include <algorithm>

#include "kiln/runner/protocol/job_fields.h"
#include "kiln/runner/protocol/limits_reader.h"
#include "kiln/runner/protocol/sanitize_tools.h"

namespace kiln::runner {

using json = nlohmann::json;
namespace field = protocol::job_field;
namespace limit = protocol::limit_field;

namespace {

constexpr std::string_view kGuide = "runner/protocol/PROTOCOL.md";
constexpr size_t kMaxTaskFiles = 32;

bool is_name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

// A path inside the bundle: relative, no "..", only [A-Za-z0-9._-] between slashes.
bool is_safe_bundle_path(const std::string& name) {
  if (name.empty() || name.size() > 200 || name.front() == '/') return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    std::string part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    for (char c : part) {
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-';
      if (!ok) return false;
    }
    start = end + 1;
  }
  return true;
}

std::string sha256_field(const JsonField& value) {
  std::string text = value.string();
  if (!is_sha256_hex(text)) value.fail("must be a SHA-256 as 64 lowercase hex digits");
  return text;
}

void read_task(const JsonField& task, JobRequest& request) {
  task.allow_only({field::kName, field::kSha256, field::kFiles});
  const JsonField name = task.at(field::kName);
  request.task_name = name.string();
  if (request.task_name.empty() || request.task_name.size() > 64 ||
      !std::all_of(request.task_name.begin(), request.task_name.end(), is_name_char))
    name.fail("must be a task name: 1-64 of lowercase letters, digits and '_'");
  request.task_sha256 = sha256_field(task.at(field::kSha256));
  const JsonField files = task.at(field::kFiles);
  const std::vector<std::string> names = files.keys();
  if (names.empty() || names.size() > kMaxTaskFiles)
    files.fail("must hold the bundle's files (task.json and the files it names), at most " +
               std::to_string(kMaxTaskFiles));
  for (const auto& file_name : names) {
    const JsonField contents = files.at(file_name);
    if (!is_safe_bundle_path(file_name))
      contents.fail(
          "is not a path inside the bundle (relative, no '..', only letters, digits and ._-)");
    request.task_files[file_name] = contents.string();
  }
  if (!request.task_files.count("task.json")) files.fail("must include task.json");
}

// {"source", "sha256"}: a kernel.cu (the candidate's, or the incumbent's).
void read_source(const JsonField& object, std::string& source_out, std::string& sha256_out) {
  object.allow_only({field::kSource, field::kSha256});
  const JsonField source = object.at(field::kSource);
  source_out = source.string();
  if (source_out.empty()) source.fail("is empty; send the kernel.cu source");
  sha256_out = sha256_field(object.at(field::kSha256));
}

void read_incumbent(const JsonField& body, JobRequest& request) {
  const auto incumbent = body.find(field::kIncumbent);
  if (!incumbent) return;
  if (request.kind != JobKind::kBenchmark)
    incumbent->fail("is only for kind benchmark (it is timed beside the candidate)");
  read_source(*incumbent, request.incumbent_source, request.incumbent_sha256);
}

// The client's limits, within the protocol's bounds; job_seconds never above this server's.
void read_limits(const JsonField& limits, double max_job_seconds, JobLimits& out) {
  out.job_seconds = max_job_seconds;
  protocol::read_limits(limits, out);
  out.job_seconds = std::min(out.job_seconds, max_job_seconds);
}

void read_profile(const JsonField& body, JobRequest& request) {
  if (request.kind != JobKind::kProfile) {
    if (auto profile = body.find(field::kProfile)) profile->fail("is only for kind profile");
    return;
  }
  const JsonField profile = body.at(field::kProfile);
  profile.allow_only({field::kWorkload});
  const JsonField workload = profile.at(field::kWorkload);
  request.profile_workload = workload.string();
  if (request.profile_workload.empty()) workload.fail("must name one workload of the task");
}

void read_sanitize(const JsonField& body, JobRequest& request) {
  const auto sanitize = body.find(field::kSanitize);
  if (request.kind != JobKind::kSanitize) {
    if (sanitize) sanitize->fail("is only for kind sanitize");
    return;
  }
  request.sanitize_tools = protocol::all_sanitize_tools();
  if (!sanitize) return;
  sanitize->allow_only({field::kTools, field::kWorkload});
  if (auto workload = sanitize->find(field::kWorkload))
    request.sanitize_workload = workload->string();
  if (auto tools = sanitize->find(field::kTools)) {
    request.sanitize_tools = tools->distinct_string_list(protocol::kSanitizeTools.size());
    const auto entries = tools->elements();
    for (size_t i = 0; i < entries.size(); ++i)
      if (!protocol::is_sanitize_tool(request.sanitize_tools[i]))
        entries[i].fail("'" + request.sanitize_tools[i] + "' is not " +
                        std::string(protocol::kSanitizeToolChoices));
  }
}

JobRequest read_request(const json& document, double max_job_seconds) {
  if (!document.is_object())
    throw JsonFieldError{"", "the body must be a JSON object (see " + std::string(kGuide) + ")"};
  const JsonField body(document, "", kGuide);
  body.allow_only({field::kKind, field::kTask, field::kCandidate, field::kIncumbent,
                   field::kWorkloads, field::kLimits, field::kProfile, field::kSanitize});
  JobRequest request;
  const JsonField kind = body.at(field::kKind);
  const std::string kind_text = kind.string();
  auto parsed = parse_kind(kind_text);
  if (!parsed)
    kind.fail("'" + kind_text + "' is not a job kind; use " +
              std::string(protocol::kJobKindChoices));
  request.kind = *parsed;
  read_task(body.at(field::kTask), request);
  read_source(body.at(field::kCandidate), request.candidate_source, request.candidate_sha256);
  read_incumbent(body, request);
  if (auto workloads = body.find(field::kWorkloads))
    request.workloads = workloads->distinct_string_list(protocol::kMaxJobWorkloads);
  request.limits.job_seconds = max_job_seconds;
  if (auto limits = body.find(field::kLimits))
    read_limits(*limits, max_job_seconds, request.limits);
  read_profile(body, request);
  read_sanitize(body, request);
  return request;
}

}  // namespace

json limits_to_json(const JobLimits& limits) {
  return json{{limit::kJobSeconds, limits.job_seconds},
              {limit::kMinSamples, limits.min_samples},
              {limit::kMaxSamples, limits.max_samples},
              {limit::kTargetRelNoise, limits.target_rel_noise},
              {limit::kSampleTimeCapSeconds, limits.sample_time_cap_seconds}};
}

bool is_sha256_hex(const std::string& text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::variant<JobRequest, FieldError> parse_job_request(const json& body, double max_job_seconds) {
  try {
    return read_request(body, max_job_seconds);
  } catch (const JsonFieldError& rejected) {
    return rejected;
  }
}

}  // namespace kiln::runner
