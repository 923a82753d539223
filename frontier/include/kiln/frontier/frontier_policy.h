// The frontier's rules, as a pure function of the members and one candidate (no I/O, so
// every rule is tested directly). The frontier keeps the best candidate overall and the best
// of each distinct approach family. A candidate is refused when its name is taken, when its
// source or its PTX is a member's, or when it does not beat the member it would replace by
// the run's promotion margin. A candidate that would become the new best must also pass
// revalidation: a fresh benchmark of the same source that passes every gate again, stays
// within the CV budget, reproduces the first geomean within the revalidation tolerance and
// still beats the incumbent by the margin: measured side by side with the incumbent in the
// revalidation job when it timed that incumbent, else against the incumbent's own geomean.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kiln/frontier/run_manifest.h"
#include "kiln/frontier/score.h"

namespace kiln::frontier {

// A frontier member (active) or a former one (superseded), as the store holds it.
struct Member {
  std::string name;
  std::string task_sha256;
  std::string result_id;
  std::string revalidation_id;  // empty when it was accepted without revalidation
  std::string candidate_sha256;
  std::string ptx_sha256;  // empty when kiln could not compile it to compare
  std::string approach;    // as the agent wrote it
  std::string family;      // canonical technique family
  std::string hypothesis;
  std::string reason;
  Score score;                                // of result_id
  std::optional<double> revalidated_geomean;  // of revalidation_id
  bool best = false;
  bool active = true;
  int64_t created_ms = 0;
  std::string superseded_by;  // the member that replaced it (inactive members)

  // What a challenger must beat: the fresher of its measurements.
  double reference_geomean() const { return revalidated_geomean.value_or(score.geomean); }
};

// What the tool knows about a candidate before the decision.
struct Proposal {
  std::string name;
  std::string result_id;
  std::string candidate_sha256;
  std::string ptx_sha256;  // empty: not compared (the note says why)
  std::string approach;
  std::string family;
  std::string hypothesis;
  std::string reason;
  Score score;
};

// A fresh measurement of the proposal's source. `problem` is set when it is not a full,
// scored benchmark (full_score's error): a revalidation that did not pass every gate.
struct Revalidation {
  std::string result_id;
  Score score;
  std::string problem;
  // The candidate against the incumbent timed beside it in the same job (the geomean of the
  // per-workload ratios), and which source that incumbent was; unset when the job timed none.
  std::optional<double> vs_incumbent;
  std::string incumbent_sha256;
};

enum class Verdict {
  kRefused,
  kNeedsRevalidation,  // would become the new best: measure it again, then decide
  kAcceptedBest,
  kAcceptedApproach,  // the best of its family, not the best overall
};

std::string_view verdict_name(Verdict verdict);  // refused | needs_revalidation | ...

struct Plan {
  Verdict verdict = Verdict::kRefused;
  std::string reason;                // one sentence with the numbers
  std::string incumbent;             // the member it was compared with; empty: none
  std::vector<std::string> retired;  // members that leave the frontier on acceptance
  std::string loses_best;            // the member that stops being the best (stays if its family's)
  nlohmann::json numbers;            // every number the decision used
};

// `members`: every member of this task, active or not (names are never reused).
Plan plan_admission(const std::vector<Member>& members, const Proposal& proposal,
                    const Budget& budget, const Revalidation* revalidation);

}  // namespace kiln::frontier
