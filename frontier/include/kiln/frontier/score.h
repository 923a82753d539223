// What a stored benchmark result is worth to the frontier: the score read from the RESULT the
// runner produced (never from anything an agent sends), and the reasons a result is not a
// full, scored benchmark of this run's task (runner/protocol/PROTOCOL.md, "Gates").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/frontier/result_store.h"

namespace kiln::tasks {
struct Task;
}  // namespace kiln::tasks

namespace kiln::frontier {

struct WorkloadScore {
  std::string name;
  bool passed = false;
  double speedup = 0;
  double median_us = 0;
  double cv = 0;  // relative: 0.004 is 0.4%
};

struct Score {
  double geomean = 0;
  size_t passed = 0;
  size_t total = 0;
  double max_cv = 0;
  std::vector<WorkloadScore> workloads;  // in the RESULT's order
};

nlohmann::json to_json(const Score& score);
Score score_from_json(const nlohmann::json& object);

// The per-workload facts of any benchmark RESULT (passed or not), for logs and listings.
std::vector<WorkloadScore> workload_rows(const nlohmann::json& result);

// The first gate of `result` that did not pass, as "name (failed: detail)"; "" when none.
std::string failing_gate(const nlohmann::json& result);

// The score of `stored` when it is a full, scored benchmark of `task`: kind benchmark,
// measured under task.sha256, status passed and scored, every gate of `required_gates`
// present and passed, every workload of the task present and passed. Otherwise an error that
// says which of these failed and what to do.
Result<Score> full_score(const StoredResult& stored, const tasks::Task& task,
                         const std::vector<std::string>& required_gates);

}  // namespace kiln::frontier
