#include "kiln/frontier/frontier_table.h"

#include <chrono>

#include "kiln/sqlite/database.h"

namespace kiln::frontier {

namespace fs = std::filesystem;
using json = nlohmann::json;
using sqlite::Statement;

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS frontier_members (
  task_sha256         TEXT NOT NULL,
  name                TEXT NOT NULL,
  result_id           TEXT NOT NULL,
  revalidation_id     TEXT NOT NULL,
  candidate_sha256    TEXT NOT NULL,
  ptx_sha256          TEXT NOT NULL,
  approach            TEXT NOT NULL,
  family              TEXT NOT NULL,
  hypothesis          TEXT NOT NULL,
  reason              TEXT NOT NULL,
  score_json          TEXT NOT NULL,
  revalidated_geomean REAL,
  best                INTEGER NOT NULL,
  active              INTEGER NOT NULL,
  created_ms          INTEGER NOT NULL,
  superseded_by       TEXT NOT NULL DEFAULT '',
  superseded_ms       INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (task_sha256, name)
);
CREATE TABLE IF NOT EXISTS frontier_decisions (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  created_ms      INTEGER NOT NULL,
  task_sha256     TEXT NOT NULL,
  result_id       TEXT NOT NULL,
  name            TEXT NOT NULL,
  approach        TEXT NOT NULL,
  verdict         TEXT NOT NULL,
  reason          TEXT NOT NULL,
  revalidation_id TEXT NOT NULL,
  numbers_json    TEXT NOT NULL,
  commit_id       TEXT NOT NULL DEFAULT '',
  commit_error    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS frontier_decisions_by_task ON frontier_decisions(task_sha256, id);
CREATE INDEX IF NOT EXISTS frontier_decisions_by_result ON frontier_decisions(result_id);
)sql";

constexpr const char* kMemberColumns =
    "name, result_id, revalidation_id, candidate_sha256, ptx_sha256, approach, family, "
    "hypothesis, reason, score_json, revalidated_geomean, best, active, created_ms, "
    "superseded_by, task_sha256";

constexpr const char* kDecisionColumns =
    "id, created_ms, task_sha256, result_id, name, approach, verdict, reason, revalidation_id, "
    "numbers_json, commit_id, commit_error";

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Member read_member(const Statement& row) {
  Member m;
  m.name = row.text(0);
  m.result_id = row.text(1);
  m.revalidation_id = row.text(2);
  m.candidate_sha256 = row.text(3);
  m.ptx_sha256 = row.text(4);
  m.approach = row.text(5);
  m.family = row.text(6);
  m.hypothesis = row.text(7);
  m.reason = row.text(8);
  m.score = score_from_json(json::parse(row.text(9), nullptr, false));
  m.revalidated_geomean = row.optional_real(10);
  m.best = row.integer(11) != 0;
  m.active = row.integer(12) != 0;
  m.created_ms = row.integer(13);
  m.superseded_by = row.text(14);
  m.task_sha256 = row.text(15);
  return m;
}

Decision read_decision(const Statement& row) {
  Decision d;
  d.id = row.integer(0);
  d.created_ms = row.integer(1);
  d.task_sha256 = row.text(2);
  d.result_id = row.text(3);
  d.name = row.text(4);
  d.approach = row.text(5);
  d.verdict = row.text(6);
  d.reason = row.text(7);
  d.revalidation_id = row.text(8);
  d.numbers = json::parse(row.text(9), nullptr, false);
  d.commit_id = row.text(10);
  d.commit_error = row.text(11);
  return d;
}

// BEGIN IMMEDIATE ... COMMIT, rolled back when the body throws.
template <typename Body>
auto in_transaction(sqlite::Database& db, Body body) {
  db.exec("BEGIN IMMEDIATE");
  try {
    auto out = body();
    db.exec("COMMIT");
    return out;
  } catch (...) {
    db.exec("ROLLBACK");
    throw;
  }
}

}  // namespace

FrontierTable::FrontierTable(fs::path path, std::unique_ptr<sqlite::Database> db)
    : path_(std::move(path)), db_(std::move(db)) {}

FrontierTable::~FrontierTable() = default;

Result<std::unique_ptr<FrontierTable>> FrontierTable::open(const fs::path& path) {
  try {
    // A decision holds the write lock for milliseconds, but another session may be writing
    // its results and its worktree commit: wait rather than fail.
    auto db = std::make_unique<sqlite::Database>(path, sqlite::OpenMode::kReadWriteCreate,
                                                 std::chrono::milliseconds(60000));
    db->exec("PRAGMA journal_mode=WAL");
    db->exec(kSchema);
    return std::unique_ptr<FrontierTable>(new FrontierTable(path, std::move(db)));
  } catch (const sqlite::Error& e) {
    return make_error("frontier store " + path.string() + ": " + e.what() +
                      "; check the file is a kiln result store and is writable");
  }
}

std::vector<Member> FrontierTable::read_members(const std::string& task_sha256) {
  Statement rows(db_->handle(), std::string("SELECT ") + kMemberColumns +
                                    " FROM frontier_members WHERE task_sha256 = ?1 ORDER BY "
                                    "created_ms, rowid");
  rows.bind(1, task_sha256);
  std::vector<Member> out;
  while (rows.step()) out.push_back(read_member(rows));
  return out;
}

Result<std::vector<Member>> FrontierTable::members(const std::string& task_sha256) {
  std::lock_guard lock(mutex_);
  try {
    return read_members(task_sha256);
  } catch (const sqlite::Error& e) {
    return make_error("reading the frontier from " + path_.string() + ": " + e.what());
  }
}

Decision FrontierTable::insert_decision(Decision d) {
  d.created_ms = now_ms();
  Statement row(db_->handle(),
                "INSERT INTO frontier_decisions (created_ms, task_sha256, result_id, name, "
                "approach, verdict, reason, revalidation_id, numbers_json) VALUES (?1, ?2, ?3, "
                "?4, ?5, ?6, ?7, ?8, ?9)");
  row.bind(1, d.created_ms)
      .bind(2, d.task_sha256)
      .bind(3, d.result_id)
      .bind(4, d.name)
      .bind(5, d.approach)
      .bind(6, d.verdict)
      .bind(7, d.reason)
      .bind(8, d.revalidation_id)
      .bind(9, d.numbers.dump());
  row.run();
  d.id = db_->last_rowid();
  return d;
}

Result<FrontierTable::Outcome> FrontierTable::decide(const std::string& task_sha256,
                                                     const Proposal& p, const Budget& budget,
                                                     const Revalidation* revalidation) {
  std::lock_guard lock(mutex_);
  try {
    return in_transaction(*db_, [&] {
      Outcome out;
      out.plan = plan_admission(read_members(task_sha256), p, budget, revalidation);
      if (out.plan.verdict == Verdict::kNeedsRevalidation) return out;
      Decision d;
      d.task_sha256 = task_sha256;
      d.result_id = p.result_id;
      d.name = p.name;
      d.approach = p.approach;
      d.verdict = std::string(verdict_name(out.plan.verdict));
      d.reason = out.plan.reason;
      d.revalidation_id = revalidation ? revalidation->result_id : "";
      d.numbers = out.plan.numbers;
      out.decision = insert_decision(std::move(d));
      if (out.plan.verdict == Verdict::kRefused) return out;
      const int64_t now = out.decision.created_ms;
      for (const auto& name : out.plan.retired) {
        Statement retire(db_->handle(),
                         "UPDATE frontier_members SET active = 0, best = 0, superseded_by = ?1, "
                         "superseded_ms = ?2 WHERE task_sha256 = ?3 AND name = ?4");
        retire.bind(1, p.name).bind(2, now).bind(3, task_sha256).bind(4, name);
        retire.run();
      }
      const bool best = out.plan.verdict == Verdict::kAcceptedBest;
      if (best) {
        Statement demote(db_->handle(),
                         "UPDATE frontier_members SET best = 0 WHERE task_sha256 = ?1");
        demote.bind(1, task_sha256);
        demote.run();
      }
      Statement insert(db_->handle(),
                       std::string("INSERT INTO frontier_members (") + kMemberColumns +
                           ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 1, "
                           "?13, '', ?14)");
      insert.bind(1, p.name)
          .bind(2, p.result_id)
          .bind(3, revalidation ? revalidation->result_id : "")
          .bind(4, p.candidate_sha256)
          .bind(5, p.ptx_sha256)
          .bind(6, p.approach)
          .bind(7, p.family)
          .bind(8, p.hypothesis)
          .bind(9, p.reason)
          .bind(10, to_json(p.score).dump())
          .bind(11, revalidation ? std::optional<double>(revalidation->score.geomean)
                                 : std::optional<double>())
          .bind(12, int64_t{best ? 1 : 0})
          .bind(13, now)
          .bind(14, task_sha256);
      insert.run();
      return out;
    });
  } catch (const sqlite::Error& e) {
    return make_error("recording the decision in " + path_.string() + ": " + e.what() +
                      "; nothing was changed, try again");
  }
}

Result<Decision> FrontierTable::record_refusal(const std::string& task_sha256,
                                               const std::string& result_id,
                                               const std::string& name, const std::string& approach,
                                               const std::string& reason, const json& numbers) {
  std::lock_guard lock(mutex_);
  try {
    return in_transaction(*db_, [&] {
      Decision d;
      d.task_sha256 = task_sha256;
      d.result_id = result_id;
      d.name = name;
      d.approach = approach;
      d.verdict = std::string(verdict_name(Verdict::kRefused));
      d.reason = reason;
      d.numbers = numbers;
      return insert_decision(std::move(d));
    });
  } catch (const sqlite::Error& e) {
    return make_error("recording the refusal in " + path_.string() + ": " + e.what());
  }
}

Result<std::vector<Decision>> FrontierTable::decisions(const std::string& task_sha256, size_t limit,
                                                       size_t offset) {
  std::lock_guard lock(mutex_);
  try {
    Statement rows(db_->handle(), std::string("SELECT ") + kDecisionColumns +
                                      " FROM frontier_decisions WHERE task_sha256 = ?1 ORDER "
                                      "BY id DESC LIMIT ?2 OFFSET ?3");
    rows.bind(1, task_sha256)
        .bind(2, static_cast<int64_t>(limit))
        .bind(3, static_cast<int64_t>(offset));
    std::vector<Decision> out;
    while (rows.step()) out.push_back(read_decision(rows));
    return out;
  } catch (const sqlite::Error& e) {
    return make_error("reading decisions from " + path_.string() + ": " + e.what());
  }
}

Result<std::vector<Decision>> FrontierTable::decisions_for(
    const std::string& task_sha256, const std::vector<std::string>& result_ids) {
  std::lock_guard lock(mutex_);
  try {
    std::vector<Decision> out;
    for (const auto& id : result_ids) {
      Statement row(db_->handle(), std::string("SELECT ") + kDecisionColumns +
                                       " FROM frontier_decisions WHERE task_sha256 = ?1 AND "
                                       "result_id = ?2 ORDER BY id DESC LIMIT 1");
      row.bind(1, task_sha256).bind(2, id);
      if (row.step()) out.push_back(read_decision(row));
    }
    return out;
  } catch (const sqlite::Error& e) {
    return make_error("reading decisions from " + path_.string() + ": " + e.what());
  }
}

Status FrontierTable::set_commit(int64_t decision_id, const std::string& commit_id,
                                 const std::string& commit_error) {
  std::lock_guard lock(mutex_);
  try {
    Statement row(db_->handle(),
                  "UPDATE frontier_decisions SET commit_id = ?1, commit_error = ?2 WHERE id = ?3");
    row.bind(1, commit_id).bind(2, commit_error).bind(3, decision_id);
    row.run();
    return Ok{};
  } catch (const sqlite::Error& e) {
    return make_error("recording the commit in " + path_.string() + ": " + e.what());
  }
}

}  // namespace kiln::frontier
