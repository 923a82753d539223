// The result store: every result a runner produced for this run, keyed by result id,
// with the exact candidate source it was measured on (runner/worker/README.md:
// record_candidate accepts only a result id the runner produced and kiln stored).
//
// One SQLite file. Tables (schema version 1, in PRAGMA user_version):
//   results(id, created_ms, kind, task_name, task_sha256, candidate_sha256, status, scored,
//           geomean_speedup, runner, job_id, source_path, result_json)
//   candidate_sources(sha256, source, created_ms)
// The frontier's own tables (frontier_table.h) live in the same file and refer to results.id;
// results are never changed once stored, so the frontier reads them outside its transactions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::frontier {}  // namespace kiln::frontier

namespace kiln::sqlite {
class Database;
}  // namespace kiln::sqlite

namespace kiln::frontier {

// What the caller knows about one finished runner job.
struct NewResult {
  std::string kind;  // verify | benchmark | profile | sanitize
  std::string task_name;
  std::string task_sha256;
  std::string candidate_source;  // the bytes that were sent to the runner
  std::string source_path;       // where they came from (relative to the run dir); empty: inline
  std::string runner;            // the runner's URL, or "local"
  std::string job_id;            // the runner's job id
  nlohmann::json result;         // RESULT (runner/protocol/PROTOCOL.md) as the runner returned it
};

struct StoredResult {
  std::string id;          // "r-" + 16 hex digits
  int64_t created_ms = 0;  // Unix time, milliseconds
  std::string kind;
  std::string task_name;
  std::string task_sha256;
  std::string candidate_sha256;
  std::string status;                     // passed | failed | error (from the RESULT)
  bool scored = false;                    // every workload of the task ran and passed
  std::optional<double> geomean_speedup;  // only when scored
  std::string runner;
  std::string job_id;
  std::string source_path;
  nlohmann::json result;
};

struct RecentQuery {
  std::string task_sha256;  // empty: every task
  std::string kind;         // empty: every kind
  size_t limit = 20;
};

// Where a run keeps its store: RUN_DIR/results.sqlite; without a run directory,
// $XDG_DATA_HOME/kiln/results.sqlite (else ~/.local/share/kiln/results.sqlite).
std::filesystem::path default_store_path(const std::filesystem::path& run_dir);

// "2025-01-31T12:34:56.789Z" for a Unix time in milliseconds.
std::string format_utc(int64_t unix_ms);

class ResultStore {
 public:
  // Opens or creates the store (and its folder). Errors name the file.
  static Result<std::unique_ptr<ResultStore>> open(const std::filesystem::path& path);
  ~ResultStore();
  ResultStore(const ResultStore&) = delete;
  ResultStore& operator=(const ResultStore&) = delete;

  // Stores a result and its candidate source; returns it with its new id. Refuses a
  // RESULT whose task or candidate hash differs from what was sent, so the store never
  // holds numbers measured on something else.
  Result<StoredResult> insert(const NewResult& result);

  // The result with this id; nullopt when there is none.
  Result<std::optional<StoredResult>> find(const std::string& id);

  // Newest first.
  Result<std::vector<StoredResult>> list_recent(const RecentQuery& query);

  // The source measured under `candidate_sha256`; nullopt when unknown.
  Result<std::optional<std::string>> candidate_source(const std::string& candidate_sha256);

  const std::filesystem::path& path() const { return path_; }

 private:
  ResultStore(std::filesystem::path path, std::unique_ptr<sqlite::Database> db);

  std::filesystem::path path_;
  std::mutex mutex_;  // one statement at a time on the connection
  std::unique_ptr<sqlite::Database> db_;
};

}  // namespace kiln::frontier
