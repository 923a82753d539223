#include "kiln/taskcheck/check_report.h"

#include <cstdio>
#include <sstream>

#include "kiln/base/file.h"

namespace kiln::taskcheck {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string state_text(StepState state) {
  switch (state) {
    case StepState::kPassed:
      return "passed";
    case StepState::kFailed:
      return "FAILED";
    case StepState::kFlagged:
      return "FLAGGED";
    case StepState::kNotRun:
      return "not run";
  }
  return "unknown";
}

namespace {

std::string state_key(StepState state) {
  switch (state) {
    case StepState::kPassed:
      return "passed";
    case StepState::kFailed:
      return "failed";
    case StepState::kFlagged:
      return "flagged";
    case StepState::kNotRun:
      return "not_run";
  }
  return "unknown";
}

std::string ids_in(const CheckReport& report, StepState state) {
  std::string out;
  for (const auto& step : report.steps)
    if (step.state == state) out += (out.empty() ? "" : ", ") + step.id;
  return out;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", seconds);
  return text;
}

}  // namespace

bool CheckReport::any(StepState state) const {
  for (const auto& step : steps)
    if (step.state == state) return true;
  return false;
}

std::string CheckReport::verdict() const {
  if (any(StepState::kFlagged))
    return "FLAGGED: task " + task + " let a wrong candidate through (" +
           ids_in(*this, StepState::kFlagged) +
           "); tighten its tolerance or fix its checks before freezing it";
  if (any(StepState::kFailed))
    return "FAILED: " + ids_in(*this, StepState::kFailed) + "; fix them and check again";
  if (any(StepState::kNotRun))
    return "PASSED every step that ran; not run: " + ids_in(*this, StepState::kNotRun) +
           ". The contract is not proven until they run (on a GPU, or with KILN_RUNNER=URL)";
  return "PASSED: every step, on the CPU and the GPU; freeze sha256 " + sha256;
}

json CheckReport::to_json() const {
  json out = {{"task", task},
              {"dir", dir.string()},
              {"sha256", sha256},
              {"kiln_version", kiln_version},
              {"created", created},
              {"seconds", seconds},
              {"passed", passed()},
              {"complete", complete()},
              {"flagged", any(StepState::kFlagged)},
              {"verdict", verdict()},
              {"steps", json::array()}};
  for (const auto& step : steps)
    out["steps"].push_back({{"id", step.id},
                            {"title", step.title},
                            {"state", state_key(step.state)},
                            {"detail", step.detail},
                            {"seconds", step.seconds},
                            {"data", step.data}});
  return out;
}

std::string CheckReport::to_text() const {
  std::ostringstream out;
  out << "kiln task check " << task << " (" << dir.string() << ")\n";
  if (!created.empty()) out << "  " << created << ", kiln " << kiln_version << "\n";
  for (const auto& step : steps) {
    out << "  " << state_text(step.state) << "  " << step.title << " [" << step.id << ", "
        << seconds_text(step.seconds) << "]\n";
    if (!step.detail.empty()) out << "      " << step.detail << "\n";
  }
  out << "bundle sha256: " << (sha256.empty() ? "(the bundle did not load)" : sha256) << "\n";
  out << verdict() << "\n";
  out << "total " << seconds_text(seconds) << "\n";
  return out.str();
}

Status write_report(const CheckReport& report, const fs::path& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error)
    return make_error("cannot make the report folder " + dir.string() + ": " + error.message() +
                      "; pass --report-dir DIR somewhere writable");
  if (auto written = write_file(dir / "report.json", report.to_json().dump(2) + "\n"); !written)
    return written;
  return write_file(dir / "report.txt", report.to_text());
}

}  // namespace kiln::taskcheck
