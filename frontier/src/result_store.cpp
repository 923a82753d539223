#include "kiln/frontier/result_store.h"

#include <chrono>
#include <ctime>
#include <random>

#include "kiln/base/env.h"
#include "kiln/base/sha256.h"
#include "kiln/sqlite/database.h"

namespace kiln::frontier {

namespace fs = std::filesystem;
using json = nlohmann::json;
using sqlite::Statement;

namespace {

constexpr int kSchemaVersion = 1;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS results (
  id               TEXT PRIMARY KEY,
  created_ms       INTEGER NOT NULL,
  kind             TEXT NOT NULL,
  task_name        TEXT NOT NULL,
  task_sha256      TEXT NOT NULL,
  candidate_sha256 TEXT NOT NULL,
  status           TEXT NOT NULL,
  scored           INTEGER NOT NULL,
  geomean_speedup  REAL,
  runner           TEXT NOT NULL,
  job_id           TEXT NOT NULL,
  source_path      TEXT NOT NULL,
  result_json      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS results_by_task ON results(task_sha256, created_ms);
CREATE INDEX IF NOT EXISTS results_by_candidate ON results(candidate_sha256);
CREATE TABLE IF NOT EXISTS candidate_sources (
  sha256     TEXT PRIMARY KEY,
  source     TEXT NOT NULL,
  created_ms INTEGER NOT NULL
);
)sql";

constexpr const char* kColumns =
    "id, created_ms, kind, task_name, task_sha256, candidate_sha256, status, scored, "
    "geomean_speedup, runner, job_id, source_path, result_json";

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string new_result_id() {
  std::random_device device;
  std::uniform_int_distribution<unsigned> nibble(0, 15);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "r-";
  for (int i = 0; i < 16; ++i) id.push_back(kHex[nibble(device)]);
  return id;
}

StoredResult read_row(const Statement& row) {
  StoredResult out;
  out.id = row.text(0);
  out.created_ms = row.integer(1);
  out.kind = row.text(2);
  out.task_name = row.text(3);
  out.task_sha256 = row.text(4);
  out.candidate_sha256 = row.text(5);
  out.status = row.text(6);
  out.scored = row.integer(7) != 0;
  out.geomean_speedup = row.optional_real(8);
  out.runner = row.text(9);
  out.job_id = row.text(10);
  out.source_path = row.text(11);
  out.result = json::parse(row.text(12), nullptr, /*allow_exceptions=*/false);
  return out;
}

// A string member of a RESULT object, or "" when absent or not a string.
std::string string_at(const json& object, const json::json_pointer& pointer) {
  if (!object.contains(pointer)) return "";
  const json& value = object.at(pointer);
  return value.is_string() ? value.get<std::string>() : "";
}

}  // namespace

fs::path default_store_path(const fs::path& run_dir) {
  if (!run_dir.empty()) return run_dir / "results.sqlite";
  if (auto data = env_value("XDG_DATA_HOME")) return fs::path(*data) / "kiln" / "results.sqlite";
  if (auto home = env_value("HOME"))
    return fs::path(*home) / ".local" / "share" / "kiln" / "results.sqlite";
  return fs::temp_directory_path() / "kiln-results.sqlite";
}

std::string format_utc(int64_t unix_ms) {
  std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &parts);
  char millis[8];
  std::snprintf(millis, sizeof millis, ".%03dZ", static_cast<int>(unix_ms % 1000));
  return std::string(text) + millis;
}

ResultStore::ResultStore(fs::path path, std::unique_ptr<sqlite::Database> db)
    : path_(std::move(path)), db_(std::move(db)) {}

ResultStore::~ResultStore() = default;

Result<std::unique_ptr<ResultStore>> ResultStore::open(const fs::path& path) {
  std::error_code error;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), error);
  if (error) {
    return make_error("cannot create " + path.parent_path().string() + " for the result store: " +
                      error.message() + "; choose a writable run directory");
  }
  try {
    auto db = std::make_unique<sqlite::Database>(path, sqlite::OpenMode::kReadWriteCreate);
    db->exec("PRAGMA journal_mode=WAL");  // readers (list_frontier) never block a writer
    Statement version(db->handle(), "PRAGMA user_version");
    int64_t found = version.step() ? version.integer(0) : 0;
    if (found > kSchemaVersion) {
      return make_error(path.string() + " has result-store schema version " +
                        std::to_string(found) + ", newer than this kiln (" +
                        std::to_string(kSchemaVersion) + "); use a newer kiln");
    }
    db->exec(kSchema);
    db->exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
    return std::unique_ptr<ResultStore>(new ResultStore(path, std::move(db)));
  } catch (const sqlite::Error& e) {
    return make_error(std::string("result store: ") + e.what() +
                      "; check the file is a kiln result store and is writable");
  }
}

Result<StoredResult> ResultStore::insert(const NewResult& input) {
  const std::string candidate_sha256 = sha256_hex(input.candidate_source);
  if (!input.result.is_object()) return make_error("the RESULT to store is not a JSON object");
  const std::string result_task = string_at(input.result, json::json_pointer("/task/sha256"));
  if (result_task != input.task_sha256) {
    return make_error("the RESULT names task sha256 '" + result_task + "' but the job was for '" +
                      input.task_sha256 + "'; it was not stored");
  }
  const std::string result_candidate =
      string_at(input.result, json::json_pointer("/candidate_sha256"));
  if (result_candidate != candidate_sha256) {
    return make_error("the RESULT names candidate sha256 '" + result_candidate +
                      "' but the source sent hashes to '" + candidate_sha256 +
                      "'; it was not stored");
  }
  StoredResult stored;
  stored.created_ms = now_ms();
  stored.kind = input.kind;
  stored.task_name = input.task_name;
  stored.task_sha256 = input.task_sha256;
  stored.candidate_sha256 = candidate_sha256;
  stored.status = string_at(input.result, json::json_pointer("/status"));
  const json summary = input.result.value("summary", json::object());
  stored.scored =
      summary.is_object() && summary.value("scored", false) == true && stored.status == "passed";
  if (stored.scored && summary.contains("geomean_speedup") &&
      summary["geomean_speedup"].is_number())
    stored.geomean_speedup = summary["geomean_speedup"].get<double>();
  stored.runner = input.runner;
  stored.job_id = input.job_id;
  stored.source_path = input.source_path;
  stored.result = input.result;

  std::lock_guard lock(mutex_);
  try {
    db_->exec("BEGIN IMMEDIATE");
    try {
      Statement source(db_->handle(),
                       "INSERT OR IGNORE INTO candidate_sources (sha256, source, created_ms) "
                       "VALUES (?1, ?2, ?3)");
      source.bind(1, candidate_sha256).bind(2, input.candidate_source).bind(3, stored.created_ms);
      source.run();
      for (int attempt = 0;; ++attempt) {
        stored.id = new_result_id();
        Statement exists(db_->handle(), "SELECT 1 FROM results WHERE id = ?1");
        exists.bind(1, stored.id);
        if (!exists.step()) break;
        if (attempt > 8) throw sqlite::Error("could not draw an unused result id");
      }
      Statement row(db_->handle(), std::string("INSERT INTO results (") + kColumns +
                                       ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                                       "?12, ?13)");
      row.bind(1, stored.id)
          .bind(2, stored.created_ms)
          .bind(3, stored.kind)
          .bind(4, stored.task_name)
          .bind(5, stored.task_sha256)
          .bind(6, stored.candidate_sha256)
          .bind(7, stored.status)
          .bind(8, int64_t{stored.scored ? 1 : 0})
          .bind(9, stored.geomean_speedup)
          .bind(10, stored.runner)
          .bind(11, stored.job_id)
          .bind(12, stored.source_path)
          .bind(13, stored.result.dump());
      row.run();
      db_->exec("COMMIT");
    } catch (...) {
      db_->exec("ROLLBACK");
      throw;
    }
  } catch (const sqlite::Error& e) {
    return make_error(std::string("storing the result in ") + path_.string() + ": " + e.what());
  }
  return stored;
}

Result<std::optional<StoredResult>> ResultStore::find(const std::string& id) {
  std::lock_guard lock(mutex_);
  try {
    Statement row(db_->handle(), std::string("SELECT ") + kColumns + " FROM results WHERE id = ?1");
    row.bind(1, id);
    if (!row.step()) return std::optional<StoredResult>();
    return std::optional<StoredResult>(read_row(row));
  } catch (const sqlite::Error& e) {
    return make_error(std::string("reading result ") + id + " from " + path_.string() + ": " +
                      e.what());
  }
}

Result<std::vector<StoredResult>> ResultStore::list_recent(const RecentQuery& query) {
  std::lock_guard lock(mutex_);
  try {
    Statement rows(db_->handle(), std::string("SELECT ") + kColumns +
                                      " FROM results WHERE (?1 = '' OR task_sha256 = ?1) AND "
                                      "(?2 = '' OR kind = ?2) ORDER BY created_ms DESC, rowid "
                                      "DESC LIMIT ?3");
    rows.bind(1, query.task_sha256).bind(2, query.kind).bind(3, static_cast<int64_t>(query.limit));
    std::vector<StoredResult> out;
    while (rows.step()) out.push_back(read_row(rows));
    return out;
  } catch (const sqlite::Error& e) {
    return make_error(std::string("listing results in ") + path_.string() + ": " + e.what());
  }
}

Result<std::optional<std::string>> ResultStore::candidate_source(const std::string& sha256) {
  std::lock_guard lock(mutex_);
  try {
    Statement row(db_->handle(), "SELECT source FROM candidate_sources WHERE sha256 = ?1");
    row.bind(1, sha256);
    if (!row.step()) return std::optional<std::string>();
    return std::optional<std::string>(row.text(0));
  } catch (const sqlite::Error& e) {
    return make_error(std::string("reading a candidate source from ") + path_.string() + ": " +
                      e.what());
  }
}

}  // namespace kiln::frontier
