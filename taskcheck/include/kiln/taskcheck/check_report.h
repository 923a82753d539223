// What `kiln task check` found: one line per step, each passed, failed, flagged (a wrong
// candidate the task let through) or not run (with why), and the bundle hash to freeze. Written
// as report.json and report.txt.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::taskcheck {

enum class StepState {
  kPassed,
  kFailed,   // the bundle is broken here (a build, the starter, a check kiln could not finish)
  kFlagged,  // a wrong candidate was accepted: the task's tolerance or checks are too loose
  kNotRun,   // could not run here (no GPU); never counts as passed
};

// "passed", "FAILED", "FLAGGED", "not run".
std::string state_text(StepState state);

struct Step {
  std::string id;     // "build_baseline", "sim_negative:perturb_one[C]", "gpu_benchmark:starter"
  std::string title;  // what was checked, for a person
  StepState state = StepState::kNotRun;
  std::string detail;  // why, in one or a few sentences
  double seconds = 0;
  nlohmann::json data = nlohmann::json::object();  // the numbers behind the verdict
};

struct CheckReport {
  std::string task;
  std::filesystem::path dir;
  std::string sha256;  // empty when the bundle did not load
  std::string kiln_version;
  std::string created;  // UTC, ISO 8601
  std::vector<Step> steps;
  double seconds = 0;

  bool any(StepState state) const;
  // Every step that ran passed, and none failed or was flagged. GPU steps may be not run.
  bool passed() const { return !any(StepState::kFailed) && !any(StepState::kFlagged); }
  // passed() and nothing left not run: the contract can be frozen.
  bool complete() const { return passed() && !any(StepState::kNotRun); }
  // One line: "PASSED", "FLAGGED: ...", "FAILED: ...", "PASSED on the CPU; not run: ...".
  std::string verdict() const;

  nlohmann::json to_json() const;
  std::string to_text() const;
};

// report.json and report.txt in `dir` (made if missing).
Status write_report(const CheckReport& report, const std::filesystem::path& dir);

}  // namespace kiln::taskcheck
