// The run's frontier for the tools that use it (record_candidate, list_frontier,
// kiln://frontier): opened on first use over the run's result store, worktree and live log,
// with the run's budget (manifest.json), the benchmark gate set and the zoo's technique
// vocabulary; plus what record_candidate injects into it: the revalidation job (a fresh
// benchmark through GpuJobs) and the PTX fingerprint (a compile through the compile cache).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/frontier/run_frontier.h"
#include "kiln/mcp/call_context.h"
#include "kiln/tools/candidate_compiler.h"
#include "kiln/tools/gpu_jobs.h"
#include "kiln/tools/task_source.h"

namespace kiln::tools {

// Builds the revalidator for one call (it reports progress on that call's context).
using RevalidatorFactory = std::function<std::unique_ptr<frontier::Revalidator>(
    const tasks::Task& task, mcp::CallContext& context)>;

struct FrontierSourceConfig {
  std::filesystem::path run_dir;  // empty: no worktree and no live log
  std::filesystem::path store;    // the result store file
  frontier::Budget budget;
  std::filesystem::path zoo_dir;  // techniques.json lives here
};

class FrontierSource {
 public:
  FrontierSource(std::shared_ptr<TaskSource> tasks, FrontierSourceConfig config,
                 RevalidatorFactory revalidator, std::shared_ptr<frontier::PtxHasher> ptx);

  Result<frontier::RunFrontier*> get();
  std::unique_ptr<frontier::Revalidator> revalidator(const tasks::Task& task,
                                                     mcp::CallContext& context) const;
  frontier::PtxHasher* ptx() const { return ptx_.get(); }

 private:
  std::shared_ptr<TaskSource> tasks_;
  FrontierSourceConfig config_;
  RevalidatorFactory revalidator_;
  std::shared_ptr<frontier::PtxHasher> ptx_;
  std::mutex mutex_;
  std::unique_ptr<frontier::RunFrontier> frontier_;
};

// The revalidation job the tools use: a fresh benchmark of the same source on every workload,
// through the same runner path as the benchmark tool (GpuJobs::run), stored in the run's
// store. It is measured against the baseline, as every benchmark is; a job that times the
// candidate interleaved against the incumbent needs a runner job kind that does not exist yet.
RevalidatorFactory gpu_revalidator(std::shared_ptr<GpuJobs> jobs);

// The PTX fingerprint through the compile cache (the compile tool's path), for the task's arch.
std::shared_ptr<frontier::PtxHasher> compiler_ptx_hasher(
    std::shared_ptr<CandidateCompiler> compiler);

}  // namespace kiln::tools
