#include "kiln/runner/job_request.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace kiln::runner {

using json = nlohmann::json;

namespace {

constexpr size_t kMaxTaskFiles = 32;
constexpr size_t kMaxWorkloads = 1024;
const std::set<std::string, std::less<>> kSanitizeTools = {"memcheck", "racecheck", "synccheck",
                                                           "initcheck"};

// Thrown inside the parser only; parse_job_request turns it into a FieldError.
struct Rejected {
  FieldError error;
};

[[noreturn]] void reject(std::string field, std::string message) {
  throw Rejected{FieldError{std::move(field), std::move(message)}};
}

void allow_only(const json& object, const std::string& where, std::set<std::string> keys) {
  for (const auto& [key, value] : object.items()) {
    if (!keys.count(key)) {
      std::string known;
      for (const auto& k : keys) known += (known.empty() ? "" : ", ") + k;
      reject(where.empty() ? key : where + "." + key, "unknown field; the fields are " + known);
    }
  }
}

const json& required(const json& object, const std::string& where, const std::string& key) {
  if (!object.contains(key)) reject(where.empty() ? key : where + "." + key, "is required");
  return object.at(key);
}

std::string string_field(const json& value, const std::string& field) {
  if (!value.is_string()) reject(field, "must be a string");
  return value.get<std::string>();
}

const json& object_field(const json& value, const std::string& field) {
  if (!value.is_object()) reject(field, "must be an object");
  return value;
}

double number_field(const json& value, const std::string& field, double low, double high) {
  if (!value.is_number()) reject(field, "must be a number");
  double number = value.get<double>();
  if (!std::isfinite(number) || number <= low || number > high)
    reject(field, "must be greater than " + json(low).dump() + " and at most " + json(high).dump());
  return number;
}

int integer_field(const json& value, const std::string& field, int low, int high) {
  if (!value.is_number_integer()) reject(field, "must be an integer");
  auto number = value.get<int64_t>();
  if (number < low || number > high)
    reject(field, "must be between " + std::to_string(low) + " and " + std::to_string(high));
  return static_cast<int>(number);
}

std::string sha256_field(const json& value, const std::string& field) {
  std::string text = string_field(value, field);
  if (!is_sha256_hex(text)) reject(field, "must be a SHA-256 as 64 lowercase hex digits");
  return text;
}

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

std::vector<std::string> string_list(const json& value, const std::string& field, size_t max) {
  if (!value.is_array()) reject(field, "must be an array of strings");
  if (value.size() > max)
    reject(field,
           "has " + std::to_string(value.size()) + " entries; at most " + std::to_string(max));
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    std::string item_field = field + "[" + std::to_string(i) + "]";
    std::string item = string_field(value[i], item_field);
    if (item.empty()) reject(item_field, "must not be empty");
    if (std::find(out.begin(), out.end(), item) != out.end())
      reject(item_field, "'" + item + "' is listed twice");
    out.push_back(std::move(item));
  }
  return out;
}

void read_task(const json& task, JobRequest& request) {
  object_field(task, "task");
  allow_only(task, "task", {"name", "sha256", "files"});
  request.task_name = string_field(required(task, "task", "name"), "task.name");
  if (request.task_name.empty() || request.task_name.size() > 64 ||
      !std::all_of(request.task_name.begin(), request.task_name.end(), is_name_char))
    reject("task.name", "must be a task name: 1-64 of lowercase letters, digits and '_'");
  request.task_sha256 = sha256_field(required(task, "task", "sha256"), "task.sha256");
  const json& files = object_field(required(task, "task", "files"), "task.files");
  if (files.empty() || files.size() > kMaxTaskFiles)
    reject("task.files",
           "must hold the bundle's files (task.json and the files it names), at most " +
               std::to_string(kMaxTaskFiles));
  for (const auto& [name, contents] : files.items()) {
    std::string field = "task.files." + name;
    if (!is_safe_bundle_path(name))
      reject(field,
             "is not a path inside the bundle (relative, no '..', only letters, digits and ._-)");
    request.task_files[name] = string_field(contents, field);
  }
  if (!request.task_files.count("task.json")) reject("task.files", "must include task.json");
}

void read_candidate(const json& candidate, JobRequest& request) {
  object_field(candidate, "candidate");
  allow_only(candidate, "candidate", {"source", "sha256"});
  request.candidate_source =
      string_field(required(candidate, "candidate", "source"), "candidate.source");
  if (request.candidate_source.empty())
    reject("candidate.source", "is empty; send the kernel.cu source");
  request.candidate_sha256 =
      sha256_field(required(candidate, "candidate", "sha256"), "candidate.sha256");
}

void read_limits(const json& limits, double max_job_seconds, JobLimits& out) {
  object_field(limits, "limits");
  allow_only(
      limits, "limits",
      {"job_seconds", "min_samples", "max_samples", "target_rel_noise", "sample_time_cap_seconds"});
  out.job_seconds = max_job_seconds;
  if (limits.contains("job_seconds"))
    out.job_seconds = std::min(max_job_seconds,
                               number_field(limits["job_seconds"], "limits.job_seconds", 0, 86400));
  if (limits.contains("min_samples"))
    out.min_samples = integer_field(limits["min_samples"], "limits.min_samples", 1, 100000);
  if (limits.contains("max_samples"))
    out.max_samples = integer_field(limits["max_samples"], "limits.max_samples", 1, 1000000);
  if (out.max_samples < out.min_samples)
    reject("limits.max_samples",
           "is below limits.min_samples (" + std::to_string(out.min_samples) + ")");
  if (limits.contains("target_rel_noise"))
    out.target_rel_noise =
        number_field(limits["target_rel_noise"], "limits.target_rel_noise", 0, 1);
  if (limits.contains("sample_time_cap_seconds"))
    out.sample_time_cap_seconds =
        number_field(limits["sample_time_cap_seconds"], "limits.sample_time_cap_seconds", 0, 86400);
}

JobRequest read_request(const json& body, double max_job_seconds) {
  if (!body.is_object()) reject("", "the body must be a JSON object (see runner/PROTOCOL.md)");
  allow_only(body, "", {"kind", "task", "candidate", "workloads", "limits", "profile", "sanitize"});
  JobRequest request;
  std::string kind = string_field(required(body, "", "kind"), "kind");
  auto parsed = parse_kind(kind);
  if (!parsed)
    reject("kind", "'" + kind + "' is not a job kind; use verify, benchmark, profile or sanitize");
  request.kind = *parsed;
  read_task(required(body, "", "task"), request);
  read_candidate(required(body, "", "candidate"), request);
  if (body.contains("workloads"))
    request.workloads = string_list(body["workloads"], "workloads", kMaxWorkloads);
  request.limits.job_seconds = max_job_seconds;
  if (body.contains("limits")) read_limits(body["limits"], max_job_seconds, request.limits);

  if (body.contains("profile") && request.kind != JobKind::kProfile)
    reject("profile", "is only for kind profile");
  if (request.kind == JobKind::kProfile) {
    const json& profile = object_field(required(body, "", "profile"), "profile");
    allow_only(profile, "profile", {"workload"});
    request.profile_workload =
        string_field(required(profile, "profile", "workload"), "profile.workload");
    if (request.profile_workload.empty())
      reject("profile.workload", "must name one workload of the task");
  }
  if (body.contains("sanitize") && request.kind != JobKind::kSanitize)
    reject("sanitize", "is only for kind sanitize");
  if (request.kind == JobKind::kSanitize) {
    request.sanitize_tools.assign(kSanitizeTools.begin(), kSanitizeTools.end());
    if (body.contains("sanitize")) {
      const json& sanitize = object_field(body["sanitize"], "sanitize");
      allow_only(sanitize, "sanitize", {"tools", "workload"});
      if (sanitize.contains("workload"))
        request.sanitize_workload = string_field(sanitize["workload"], "sanitize.workload");
      if (sanitize.contains("tools")) {
        request.sanitize_tools =
            string_list(sanitize["tools"], "sanitize.tools", kSanitizeTools.size());
        for (size_t i = 0; i < request.sanitize_tools.size(); ++i)
          if (!kSanitizeTools.count(request.sanitize_tools[i]))
            reject("sanitize.tools[" + std::to_string(i) + "]",
                   "'" + request.sanitize_tools[i] +
                       "' is not memcheck, racecheck, synccheck or initcheck");
      }
    }
  }
  return request;
}

}  // namespace

json JobLimits::to_json() const {
  return json{{"job_seconds", job_seconds},
              {"min_samples", min_samples},
              {"max_samples", max_samples},
              {"target_rel_noise", target_rel_noise},
              {"sample_time_cap_seconds", sample_time_cap_seconds}};
}

bool is_sha256_hex(const std::string& text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::variant<JobRequest, FieldError> parse_job_request(const json& body, double max_job_seconds) {
  try {
    return read_request(body, max_job_seconds);
  } catch (const Rejected& rejected) {
    return rejected.error;
  }
}

}  // namespace kiln::runner
