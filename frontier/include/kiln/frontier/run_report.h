// What `kiln report RUN` shows, read from a run directory through the frontier's public API:
// the manifest, every benchmark result of the run's task in the result store (with the
// frontier's members and decisions marked on it) and the tool calls of the recorded sessions.
// Reading never creates anything: a run without a result store is a report with no results.
// The page itself is run_report_html.h.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/frontier/frontier_policy.h"
#include "kiln/frontier/frontier_table.h"
#include "kiln/frontier/run_manifest.h"
#include "kiln/frontier/session_stats.h"

namespace kiln::frontier {

// One benchmark result of the run, as the timeline plots it.
struct ReportPoint {
  std::string result_id;
  int64_t created_ms = 0;
  std::string status;             // passed | failed | error
  bool scored = false;            // a full benchmark with every gate passed
  std::optional<double> geomean;  // scored: the stored geomean; a passing subset: its rows'
  size_t passed = 0;              // workloads
  size_t total = 0;
  std::string failing_gate;  // score.h failing_gate(), or the RESULT's error
  std::string source_path;
  std::string member;          // the frontier member measured by it; empty: none
  bool member_active = false;  // that member is on the frontier now
  bool best = false;           // that member is the best now
  bool revalidation = false;   // the result is a revalidation job of a member or proposal
  std::string verdict;         // the newest frontier decision about it; empty: none
  std::string verdict_reason;
};

struct RunReport {
  std::filesystem::path run_dir;
  RunManifest manifest;
  std::vector<ReportPoint> points;  // oldest first
  std::vector<Member> members;      // on the frontier now, best first
  std::vector<Member> former;       // superseded members, newest first
  std::optional<Member> best;
  std::vector<Decision> decisions;  // newest first, at most `decision_limit`
  size_t decision_count = 0;        // all decisions of the task
  SessionStats sessions;
  size_t other_task_results = 0;   // stored results measured under another task hash
  std::vector<std::string> notes;  // what the report could not read, and what to do
  int64_t generated_ms = 0;
};

struct ReportOptions {
  size_t decision_limit = 50;
};

// Errors: the folder is not a run (no manifest.json, or one kiln cannot read), or the store
// cannot be read; each says what to do.
Result<RunReport> load_run_report(const std::filesystem::path& run_dir,
                                  const ReportOptions& options = {});

}  // namespace kiln::frontier
