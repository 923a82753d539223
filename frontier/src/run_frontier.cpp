#include "kiln/frontier/run_frontier.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <set>

#include "kiln/base/file.h"
#include "kiln/frontier/approach.h"
#include "kiln/frontier/frontier_index.h"
#include "kiln/frontier/live_log.h"
#include "kiln/frontier/score.h"
#include "kiln/frontier/worktree.h"
#include "kiln/tasks/task.h"

namespace kiln::frontier {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '_' && c != '-'))) return false;
  }
  return true;
}

// The RESULT's `incumbent` (runner/protocol/PROTOCOL.md): the candidate against the incumbent
// timed beside it. Left unset when the job timed none or measured no ratio.
void read_incumbent_ratio(const nlohmann::json& result, Revalidation* revalidation) {
  auto incumbent = result.find("incumbent");
  if (incumbent == result.end() || !incumbent->is_object()) return;
  auto sha = incumbent->find("sha256");
  auto ratio = incumbent->find("speedup_geomean");
  if (sha == incumbent->end() || !sha->is_string() || ratio == incumbent->end() ||
      !ratio->is_number())
    return;
  revalidation->incumbent_sha256 = sha->get<std::string>();
  revalidation->vs_incumbent = ratio->get<double>();
}

// An exclusive flock held for the lifetime of the object (exports from two sessions).
class FileLock {
 public:
  explicit FileLock(const fs::path& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

std::string commit_message(const Member& m) {
  char geomean[32];
  std::snprintf(geomean, sizeof geomean, "%.3fx", m.score.geomean);
  std::string message = "frontier: " + m.name + " " + geomean + " geomean, " +
                        std::to_string(m.score.passed) + "/" + std::to_string(m.score.total) +
                        " passed, result " + m.result_id;
  if (!m.revalidation_id.empty()) {
    char again[32];
    std::snprintf(again, sizeof again, "%.3fx", m.revalidated_geomean.value_or(0));
    message += ", revalidated " + m.revalidation_id + " (" + again + ")";
  }
  message += m.best ? ", best" : ", best of approach " + m.family;
  message += "\n\napproach: " + m.approach + "\nhypothesis: " + m.hypothesis +
             "\nreason: " + m.reason + "\n";
  return message;
}

RunFrontier::RunFrontier(RunFrontierConfig config, std::shared_ptr<const tasks::Task> task,
                         std::unique_ptr<ResultStore> store, std::unique_ptr<FrontierTable> table)
    : config_(std::move(config)),
      task_(std::move(task)),
      store_(std::move(store)),
      table_(std::move(table)) {}

RunFrontier::~RunFrontier() = default;

Result<std::unique_ptr<RunFrontier>> RunFrontier::open(RunFrontierConfig config,
                                                       std::shared_ptr<const tasks::Task> task) {
  auto store = ResultStore::open(config.store);
  if (!store) return store.error();
  auto table = FrontierTable::open(config.store);
  if (!table) return table.error();
  if (config.lock_file.empty()) config.lock_file = config.store.string() + ".lock";
  return std::unique_ptr<RunFrontier>(new RunFrontier(
      std::move(config), std::move(task), std::move(store).value(), std::move(table).value()));
}

fs::path RunFrontier::frontier_dir() const {
  return config_.worktree / "candidates" / task_->name / "frontier";
}

void RunFrontier::log(const std::string& line) {
  if (config_.live_log.empty()) return;
  (void)append_line(config_.live_log, line);  // the log is for people; a failure changes nothing
}

Result<RecordOutcome> RunFrontier::refuse(const RecordRequest& request, const std::string& reason,
                                          const json& numbers) {
  auto decision = table_->record_refusal(task_->sha256, request.result_id, request.name,
                                         request.approach, reason, numbers);
  if (!decision) return decision.error();
  log(decision_line(*decision));
  RecordOutcome outcome;
  outcome.decision = *decision;
  return outcome;
}

Result<RecordOutcome> RunFrontier::record(const RecordRequest& request, Revalidator& revalidator,
                                          PtxHasher* ptx) {
  if (!valid_name(request.name))
    return refuse(request,
                  "the name `" + request.name +
                      "` is not valid: 1-64 characters of a-z, 0-9, '_' and '-', starting with a "
                      "letter or digit (it becomes a folder name)",
                  json::object());
  auto found = store_->find(request.result_id);
  if (!found) return found.error();
  if (!found->has_value())
    return refuse(request,
                  "no result `" + request.result_id +
                      "` in this run's result store; pass the result_id a benchmark call "
                      "returned in this run (numbers you computed or copied are never accepted)",
                  json::object());
  const StoredResult& first = **found;
  auto score = full_score(first, *task_, config_.required_gates);
  if (!score) return refuse(request, score.error().message, json::object());
  auto approach = parse_approach(request.approach, config_.techniques);
  if (!approach) return refuse(request, approach.error().message, json::object());
  auto source = store_->candidate_source(first.candidate_sha256);
  if (!source) return source.error();
  if (!source->has_value())
    return refuse(request,
                  "the store has no source for result " + first.id + "; benchmark it again",
                  json::object());

  Proposal proposal;
  proposal.name = request.name;
  proposal.result_id = first.id;
  proposal.candidate_sha256 = first.candidate_sha256;
  proposal.approach = request.approach;
  proposal.family = approach->family;
  proposal.hypothesis = request.hypothesis;
  proposal.reason = request.reason;
  proposal.score = *score;
  std::vector<std::string> notes;
  if (ptx) {
    auto fingerprint = ptx->fingerprint(**source);
    if (fingerprint)
      proposal.ptx_sha256 = *fingerprint;
    else
      notes.push_back("PTX not compared (only the source hash was): " +
                      fingerprint.error().message);
  } else {
    notes.push_back("PTX not compared: no compiler configured");
  }

  auto decided = table_->decide(task_->sha256, proposal, config_.budget, nullptr);
  if (!decided) return decided.error();
  if (decided->plan.verdict == Verdict::kNeedsRevalidation) {
    // The best, timed beside the candidate in the revalidation job.
    std::string incumbent_source;
    if (!decided->plan.incumbent.empty()) {
      auto members = table_->members(task_->sha256);
      if (!members) return members.error();
      for (const auto& m : *members) {
        if (m.name != decided->plan.incumbent) continue;
        auto stored = store_->candidate_source(m.candidate_sha256);
        if (!stored) return stored.error();
        if (stored->has_value()) incumbent_source = **stored;
      }
      if (incumbent_source.empty())
        notes.push_back(
            "the incumbent's source is not in the store, so it was not timed beside "
            "the candidate: compared by its own geomean");
    }
    auto again = revalidator.revalidate(first, **source, incumbent_source);
    if (!again)
      return refuse(request, "revalidation could not run: " + again.error().message,
                    decided->plan.numbers);
    auto second = store_->find(*again);
    if (!second) return second.error();
    Revalidation revalidation;
    revalidation.result_id = *again;
    if (!second->has_value()) {
      revalidation.problem = "its result is not in the store";
    } else {
      log(evaluation_line(**second, "revalidation"));
      auto again_score = full_score(**second, *task_, config_.required_gates);
      if (again_score)
        revalidation.score = *again_score;
      else
        revalidation.problem = again_score.error().message;
      read_incumbent_ratio((**second).result, &revalidation);
    }
    // Decided again over the members as they are now: another session may have changed them
    // while the revalidation job ran.
    decided = table_->decide(task_->sha256, proposal, config_.budget, &revalidation);
    if (!decided) return decided.error();
  }
  RecordOutcome outcome;
  outcome.decision = decided->decision;
  outcome.notes = std::move(notes);
  outcome.retired = decided->plan.retired;
  log(decision_line(outcome.decision));
  if (decided->plan.verdict == Verdict::kRefused) return outcome;
  auto members = table_->members(task_->sha256);
  if (!members) return members.error();
  for (const auto& m : *members)
    if (m.name == request.name) outcome.member = m;
  export_and_commit(outcome);
  return outcome;
}

void RunFrontier::export_and_commit(RecordOutcome& outcome) {
  if (config_.worktree.empty()) {
    outcome.commit_error = "no run directory, so no worktree: nothing was written or committed";
    return;
  }
  if (!fs::exists(config_.worktree / ".git")) {
    outcome.commit_error = config_.worktree.string() +
                           " is not a git repository; the frontier entry is stored, but nothing "
                           "was committed (prepare runs with `kiln setup`)";
    return;
  }
  // One export at a time across sessions: each writes every member's folder and the index
  // from the store as it is then, so the last export is always the whole frontier.
  FileLock lock(config_.lock_file);
  auto members = table_->members(task_->sha256);
  if (!members) {
    outcome.commit_error = members.error().message;
    return;
  }
  const fs::path dir = frontier_dir();
  const std::string prefix = "candidates/" + task_->name + "/frontier/";
  std::vector<std::string> paths;
  std::error_code error;
  fs::create_directories(dir, error);
  std::string problem;
  for (const auto& m : *members) {
    paths.push_back(prefix + m.name);
    if (!m.active) {
      fs::remove_all(dir / m.name, error);
      continue;
    }
    auto stored = store_->find(m.result_id);
    auto source = store_->candidate_source(m.candidate_sha256);
    if (!stored || !stored->has_value() || !source || !source->has_value()) {
      problem = "the store lost result " + m.result_id;
      continue;
    }
    json result = (**stored).result;
    json record = {{"result_id", m.result_id},
                   {"revalidation_id", m.revalidation_id},
                   {"runner", (**stored).runner},
                   {"job_id", (**stored).job_id},
                   {"measured", format_utc((**stored).created_ms)},
                   {"result", result}};
    fs::create_directories(dir / m.name, error);
    if (auto written = write_file(dir / m.name / "kernel.cu", **source); !written)
      problem = written.error().message;
    if (auto written = write_file(dir / m.name / "result.json", record.dump(2) + "\n"); !written)
      problem = written.error().message;
  }
  const json index = frontier_index(task_->name, task_->sha256, *members, config_.budget, now_ms());
  if (auto written = write_file(dir / "index.json", index.dump(2) + "\n"); !written)
    problem = written.error().message;
  paths.push_back(prefix + "index.json");
  if (!problem.empty()) {
    outcome.commit_error = "writing the frontier's files failed: " + problem;
  } else if (outcome.member) {
    outcome.candidate_dir = dir / outcome.member->name;
    auto commit = Worktree(config_.worktree).commit_paths(paths, commit_message(*outcome.member));
    if (commit)
      outcome.commit_id = *commit;
    else
      outcome.commit_error = commit.error().message;
  }
  (void)table_->set_commit(outcome.decision.id, outcome.commit_id, outcome.commit_error);
  outcome.decision.commit_id = outcome.commit_id;
  outcome.decision.commit_error = outcome.commit_error;
}

Result<FrontierListing> RunFrontier::listing(size_t recent_limit, size_t offset) {
  FrontierListing out;
  out.offset = offset;
  auto members = table_->members(task_->sha256);
  if (!members) return members.error();
  for (const auto& m : *members)
    if (m.active) out.members.push_back(m);
  std::stable_sort(out.members.begin(), out.members.end(), [](const Member& a, const Member& b) {
    if (a.best != b.best) return a.best;
    return a.reference_geomean() > b.reference_geomean();
  });
  RecentQuery query;
  query.task_sha256 = task_->sha256;
  query.kind = "benchmark";
  query.limit = recent_limit + offset;
  auto recent = store_->list_recent(query);
  if (!recent) return recent.error();
  std::vector<std::string> ids;
  for (size_t i = offset; i < recent->size(); ++i) ids.push_back((*recent)[i].id);
  auto decisions = table_->decisions_for(task_->sha256, ids);
  if (!decisions) return decisions.error();
  for (size_t i = offset; i < recent->size(); ++i) {
    RecentResult row;
    row.result = (*recent)[i];
    for (const auto& d : *decisions)
      if (d.result_id == row.result.id) row.decision = d;
    out.recent.push_back(std::move(row));
  }
  return out;
}

}  // namespace kiln::frontier
