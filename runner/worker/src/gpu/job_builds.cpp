#include "job_builds.h"

#include <string>

namespace kiln::worker {

namespace {

// The cached build's folder: `prefix` and the first 24 hex digits of the fingerprint, beside
// the candidate's build folder. The fingerprint leaves the request's paths out, so it can be
// taken before build_dir is set.
std::filesystem::path cached_build_dir(const compiler::KernelBuild& builder, const JobSpec& spec,
                                       const compiler::BuildRequest& request,
                                       const std::string& prefix) {
  return spec.build_dir.parent_path() / (prefix + builder.fingerprint(request).substr(0, 24));
}

}  // namespace

compiler::BuildRequest candidate_build_request(const JobSpec& spec, const tasks::Task& task) {
  compiler::BuildRequest request;
  request.kind = compiler::BuildKind::kCandidate;
  request.source = spec.candidate;
  request.build_dir = spec.build_dir;
  request.arch = task.arch;
  request.banned_prefixes = task.banned_symbols;
  return request;
}

compiler::BuildRequest incumbent_build_request(const compiler::KernelBuild& builder,
                                               const JobSpec& spec, const tasks::Task& task) {
  compiler::BuildRequest request = candidate_build_request(spec, task);
  request.source = spec.incumbent;
  request.build_dir = cached_build_dir(builder, spec, request, "incumbent-");
  return request;
}

compiler::BuildRequest baseline_build_request(const compiler::KernelBuild& builder,
                                              const JobSpec& spec, const tasks::Task& task) {
  compiler::BuildRequest request;
  request.kind = compiler::BuildKind::kBaseline;
  request.source = task.baseline_path;
  request.arch = task.arch;
  request.libraries = task.baseline_libraries;
  request.build_dir = cached_build_dir(builder, spec, request, "baseline-");
  return request;
}

compiler::BuildRequest reference_build_request(const compiler::KernelBuild& builder,
                                               const JobSpec& spec, const tasks::Task& task) {
  compiler::BuildRequest request;
  request.kind = compiler::BuildKind::kReference;
  request.source = task.reference_path;
  request.build_dir = cached_build_dir(builder, spec, request, "reference-");
  return request;
}

compiler::BuildRequest gpu_reference_build_request(const compiler::KernelBuild& builder,
                                                   const JobSpec& spec, const tasks::Task& task) {
  compiler::BuildRequest request;
  request.kind = compiler::BuildKind::kGpuReference;
  request.source = task.gpu_reference_path;
  request.arch = task.arch;
  request.build_dir = cached_build_dir(builder, spec, request, "gpu-reference-");
  return request;
}

}  // namespace kiln::worker
