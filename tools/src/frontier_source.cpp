#include "kiln/tools/frontier_source.h"

#include "kiln/frontier/approach.h"
#include "kiln/frontier/live_log.h"
#include "kiln/kb/zoo_entry.h"
#include "kiln/runner/protocol/gates.h"

namespace kiln::tools {

namespace {

class GpuRevalidator : public frontier::Revalidator {
 public:
  GpuRevalidator(std::shared_ptr<GpuJobs> jobs, const tasks::Task& task, mcp::CallContext& context)
      : jobs_(std::move(jobs)), task_(task), context_(context) {}

  Result<std::string> revalidate(const frontier::StoredResult& first, const std::string& source,
                                 const std::string& incumbent_source) override {
    Candidate candidate;
    candidate.source = source;
    candidate.path = first.source_path;
    runner::JobSpec spec;
    spec.kind = runner::JobKind::kBenchmark;
    spec.candidate_source = source;  // every workload: a revalidation is a full benchmark
    spec.incumbent_source = incumbent_source;
    auto job = jobs_->run(task_, spec, candidate, context_, task_.workloads.size(),
                          /*log_evaluation=*/false);
    if (!job) return job.error();
    if (job->state == "cancelled") return make_error("the revalidation job was cancelled");
    if (job->result_id.empty())
      return make_error("the revalidation result was not stored: " + job->store_error);
    return job->result_id;
  }

 private:
  std::shared_ptr<GpuJobs> jobs_;
  const tasks::Task& task_;
  mcp::CallContext& context_;
};

class CompilerPtxHasher : public frontier::PtxHasher {
 public:
  explicit CompilerPtxHasher(std::shared_ptr<CandidateCompiler> compiler)
      : compiler_(std::move(compiler)) {}

  Result<std::string> fingerprint(const std::string& source) override {
    Candidate candidate;
    candidate.source = source;  // compiled as kernel.cu, whatever its path was
    auto compiled = compiler_->compile(nlohmann::json::object(), candidate);
    if (!compiled) return compiled.error();
    if (!compiled->ok || compiled->ptx.empty())
      return make_error("the source does not compile here to PTX (" +
                        std::to_string(compiled->errors()) + " errors)");
    return frontier::ptx_fingerprint(compiled->ptx);
  }

 private:
  std::shared_ptr<CandidateCompiler> compiler_;
};

}  // namespace

RevalidatorFactory gpu_revalidator(std::shared_ptr<GpuJobs> jobs) {
  return [jobs](const tasks::Task& task, mcp::CallContext& context) {
    return std::unique_ptr<frontier::Revalidator>(new GpuRevalidator(jobs, task, context));
  };
}

std::shared_ptr<frontier::PtxHasher> compiler_ptx_hasher(
    std::shared_ptr<CandidateCompiler> compiler) {
  return std::make_shared<CompilerPtxHasher>(std::move(compiler));
}

FrontierSource::FrontierSource(std::shared_ptr<TaskSource> tasks, FrontierSourceConfig config,
                               RevalidatorFactory revalidator,
                               std::shared_ptr<frontier::PtxHasher> ptx)
    : tasks_(std::move(tasks)),
      config_(std::move(config)),
      revalidator_(std::move(revalidator)),
      ptx_(std::move(ptx)) {}

Result<frontier::RunFrontier*> FrontierSource::get() {
  std::lock_guard lock(mutex_);
  if (frontier_) return frontier_.get();
  auto task = tasks_->get("");
  if (!task) return task.error();
  frontier::RunFrontierConfig config;
  config.store = config_.store;
  if (!config_.run_dir.empty()) {
    config.worktree = config_.run_dir / "worktree";
    config.live_log = config_.run_dir / frontier::kLiveLogFile;
  }
  config.budget = config_.budget;
  for (auto gate : runner::protocol::kBenchmarkGates) config.required_gates.emplace_back(gate);
  for (const auto& [name, definition] : kb::load_zoo_vocabulary(config_.zoo_dir).techniques)
    config.techniques.push_back(name);
  auto opened = frontier::RunFrontier::open(std::move(config), *task);
  if (!opened) return opened.error();
  frontier_ = std::move(opened).value();
  return frontier_.get();
}

std::unique_ptr<frontier::Revalidator> FrontierSource::revalidator(
    const tasks::Task& task, mcp::CallContext& context) const {
  return revalidator_(task, context);
}

}  // namespace kiln::tools
