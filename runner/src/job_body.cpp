#include "kiln/runner/job_body.h"

#include "kiln/base/file.h"
#include "kiln/base/sha256.h"
#include "kiln/runner/protocol/job_fields.h"
#include "kiln/runner/protocol/job_limits.h"

namespace kiln::runner {

using json = nlohmann::json;
namespace field = protocol::job_field;

Result<json> make_job_body(const tasks::Task& task, const JobSpec& spec) {
  json files = json::object();
  for (const auto& path : tasks::bundle_files(task)) {
    auto contents = read_file(path);
    if (!contents) return make_error("reading task " + task.name + ": " + contents.error().message);
    files[path.lexically_relative(task.dir).generic_string()] = std::move(*contents);
  }
  json body{{field::kKind, kind_name(spec.kind)},
            {field::kTask,
             {{field::kName, task.name},
              {field::kSha256, task.sha256},
              {field::kFiles, std::move(files)}}},
            {field::kCandidate,
             {{field::kSource, spec.candidate_source},
              {field::kSha256, sha256_hex(spec.candidate_source)}}},
            {field::kWorkloads, spec.workloads}};
  if (!spec.incumbent_source.empty())
    body[field::kIncumbent] = {{field::kSource, spec.incumbent_source},
                               {field::kSha256, sha256_hex(spec.incumbent_source)}};
  if (spec.job_seconds)
    body[field::kLimits] = {{protocol::limit_field::kJobSeconds, *spec.job_seconds}};
  if (spec.kind == JobKind::kProfile)
    body[field::kProfile] = {{field::kWorkload, spec.profile_workload}};
  if (spec.kind == JobKind::kSanitize) {
    json sanitize = json::object();
    if (!spec.sanitize_tools.empty()) sanitize[field::kTools] = spec.sanitize_tools;
    if (!spec.sanitize_workload.empty()) sanitize[field::kWorkload] = spec.sanitize_workload;
    body[field::kSanitize] = std::move(sanitize);
  }
  return body;
}

}  // namespace kiln::runner
