// The frontier's tables, in the run's result store file (results.sqlite):
//   frontier_members(task_sha256, name, result_id, revalidation_id, candidate_sha256,
//                    ptx_sha256, approach, family, hypothesis, reason, score_json,
//                    revalidated_geomean, best, active, created_ms, superseded_by, superseded_ms)
//   frontier_decisions(id, created_ms, task_sha256, result_id, name, approach, verdict, reason,
//                      revalidation_id, numbers_json, commit_id, commit_error)
// Every decision is a row, refusals too, with the numbers it used. A decision is made and
// applied in one write transaction (BEGIN IMMEDIATE) over the members as they are then, so two
// sessions recording into one run at once never both replace the same incumbent.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/frontier/frontier_policy.h"

namespace kiln::sqlite {
class Database;
}  // namespace kiln::sqlite

namespace kiln::frontier {

struct Decision {
  int64_t id = 0;
  int64_t created_ms = 0;
  std::string task_sha256;
  std::string result_id;
  std::string name;
  std::string approach;
  std::string verdict;  // verdict_name(): refused | accepted_best | accepted_approach
  std::string reason;
  std::string revalidation_id;
  nlohmann::json numbers;
  std::string commit_id;     // the worktree commit of an acceptance; empty: none (yet)
  std::string commit_error;  // why the commit failed, when it did
};

class FrontierTable {
 public:
  static Result<std::unique_ptr<FrontierTable>> open(const std::filesystem::path& path);
  ~FrontierTable();
  FrontierTable(const FrontierTable&) = delete;
  FrontierTable& operator=(const FrontierTable&) = delete;

  // Every member of the task, active or not, oldest first.
  Result<std::vector<Member>> members(const std::string& task_sha256);

  // In one write transaction: plan_admission over the members as they are now; unless the plan
  // is kNeedsRevalidation, the decision row and, on acceptance, the member changes.
  struct Outcome {
    Plan plan;
    Decision decision;  // id 0 for kNeedsRevalidation (nothing was written)
  };
  Result<Outcome> decide(const std::string& task_sha256, const Proposal& proposal,
                         const Budget& budget, const Revalidation* revalidation);

  // A refusal decided before there was a proposal (an unknown id, an unscored result).
  Result<Decision> record_refusal(const std::string& task_sha256, const std::string& result_id,
                                  const std::string& name, const std::string& approach,
                                  const std::string& reason, const nlohmann::json& numbers);

  // Newest first.
  Result<std::vector<Decision>> decisions(const std::string& task_sha256, size_t limit,
                                          size_t offset);
  // The newest decision about each of these result ids (for the recent-results listing).
  Result<std::vector<Decision>> decisions_for(const std::string& task_sha256,
                                              const std::vector<std::string>& result_ids);

  Status set_commit(int64_t decision_id, const std::string& commit_id,
                    const std::string& commit_error);

 private:
  FrontierTable(std::filesystem::path path, std::unique_ptr<sqlite::Database> db);
  Decision insert_decision(Decision decision);  // throws sqlite::Error; inside a transaction
  std::vector<Member> read_members(const std::string& task_sha256);  // throws sqlite::Error

  std::filesystem::path path_;
  std::mutex mutex_;  // one transaction at a time on this connection
  std::unique_ptr<sqlite::Database> db_;
};

}  // namespace kiln::frontier
