#include "kiln/runner/job_body.h"

#include "kiln/base/file.h"
#include "kiln/base/sha256.h"

namespace kiln::runner {

using json = nlohmann::json;

Result<json> make_job_body(const tasks::Task& task, const JobSpec& spec) {
  json files = json::object();
  std::vector<std::filesystem::path> paths = {task.dir / "task.json", task.reference_path,
                                              task.baseline_path, task.starter_path,
                                              task.readme_path};
  for (const auto& path : paths) {
    auto contents = read_file(path);
    if (!contents) return make_error("reading task " + task.name + ": " + contents.error().message);
    files[path.lexically_relative(task.dir).generic_string()] = std::move(*contents);
  }
  json body{{"kind", kind_name(spec.kind)},
            {"task", {{"name", task.name}, {"sha256", task.sha256}, {"files", std::move(files)}}},
            {"candidate",
             {{"source", spec.candidate_source}, {"sha256", sha256_hex(spec.candidate_source)}}},
            {"workloads", spec.workloads}};
  if (spec.job_seconds) body["limits"] = {{"job_seconds", *spec.job_seconds}};
  if (spec.kind == JobKind::kProfile) body["profile"] = {{"workload", spec.profile_workload}};
  if (spec.kind == JobKind::kSanitize) {
    json sanitize = json::object();
    if (!spec.sanitize_tools.empty()) sanitize["tools"] = spec.sanitize_tools;
    if (!spec.sanitize_workload.empty()) sanitize["workload"] = spec.sanitize_workload;
    body["sanitize"] = std::move(sanitize);
  }
  return body;
}

}  // namespace kiln::runner
