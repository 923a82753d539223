// record_candidate and list_frontier's library: one run's frontier over its result store,
// its worktree and its live log. record() reads the candidate's numbers from the stored
// RESULT only, decides by frontier_policy.h (revalidating a would-be new best through the
// injected Revalidator), stores every decision, and on acceptance exports the frontier to
// the worktree (NAME/kernel.cu, NAME/result.json, index.json) and commits those paths only.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/frontier/frontier_table.h"
#include "kiln/frontier/result_store.h"

namespace kiln::tasks {
struct Task;
}  // namespace kiln::tasks

namespace kiln::frontier {

// Measures a candidate again: a fresh benchmark job of `source` on every workload, stored in
// the run's result store, with `incumbent_source` (the frontier's best; empty when there is
// none) timed beside it in every sample, so "beats the incumbent" is a ratio measured side by
// side (the RESULT's `incumbent`). Returns the new result id. The tool implements it with the
// runner client (tools/src/frontier_source.cpp); tests with a fake.
class Revalidator {
 public:
  virtual ~Revalidator() = default;
  virtual Result<std::string> revalidate(const StoredResult& first, const std::string& source,
                                         const std::string& incumbent_source) = 0;
};

// The PTX fingerprint (approach.h: ptx_fingerprint) of a source; the tool compiles it with
// the compile cache. An error leaves PTX uncompared, and the answer says so.
class PtxHasher {
 public:
  virtual ~PtxHasher() = default;
  virtual Result<std::string> fingerprint(const std::string& source) = 0;
};

struct RunFrontierConfig {
  std::filesystem::path store;      // results.sqlite
  std::filesystem::path worktree;   // RUN/worktree; empty: no files, no commits
  std::filesystem::path live_log;   // RUN/live.log; empty: none
  std::filesystem::path lock_file;  // serializes exports between sessions; empty: store + ".lock"
  Budget budget;
  std::vector<std::string> required_gates;  // the benchmark gate set
  std::vector<std::string> techniques;      // the zoo's vocabulary
};

struct RecordRequest {
  std::string result_id;
  std::string name;
  std::string approach;
  std::string hypothesis;
  std::string reason;
};

struct RecordOutcome {
  Decision decision;
  std::optional<Member> member;  // on acceptance
  std::vector<std::string> retired;
  std::string commit_id;
  std::string commit_error;
  std::filesystem::path candidate_dir;  // the member's folder in the worktree
  std::vector<std::string> notes;       // what kiln could not check, and why

  bool accepted() const { return member.has_value(); }
};

struct RecentResult {
  StoredResult result;
  std::optional<Decision> decision;  // the newest frontier decision about it
};

struct FrontierListing {
  std::vector<Member> members;  // active, best first
  std::vector<RecentResult> recent;
  size_t offset = 0;
};

class RunFrontier {
 public:
  static Result<std::unique_ptr<RunFrontier>> open(RunFrontierConfig config,
                                                   std::shared_ptr<const tasks::Task> task);
  ~RunFrontier();

  // An error means kiln could not decide (the store failed); a refusal is an outcome.
  Result<RecordOutcome> record(const RecordRequest& request, Revalidator& revalidator,
                               PtxHasher* ptx);

  // Active members and the run's newest results of this task (newest first, `offset` skipped).
  Result<FrontierListing> listing(size_t recent_limit, size_t offset);

  const tasks::Task& task() const { return *task_; }
  const RunFrontierConfig& config() const { return config_; }
  // The frontier folder in the worktree: worktree/candidates/TASK/frontier.
  std::filesystem::path frontier_dir() const;

 private:
  RunFrontier(RunFrontierConfig config, std::shared_ptr<const tasks::Task> task,
              std::unique_ptr<ResultStore> store, std::unique_ptr<FrontierTable> table);
  Result<RecordOutcome> refuse(const RecordRequest& request, const std::string& reason,
                               const nlohmann::json& numbers);
  void log(const std::string& line);
  // Writes every member's folder and index.json from the store and commits them.
  void export_and_commit(RecordOutcome& outcome);

  RunFrontierConfig config_;
  std::shared_ptr<const tasks::Task> task_;
  std::unique_ptr<ResultStore> store_;
  std::unique_ptr<FrontierTable> table_;
};

// "frontier: NAME 1.043x geomean, 10/10 passed, result r-..., revalidated r-..."
std::string commit_message(const Member& member);

}  // namespace kiln::frontier
