// A scripted Slurm for the runner's Slurm tests: answers sbatch, squeue, sacct, scancel and
// sinfo as a test sets it up, records every call, and (when asked) runs the submitted batch
// script at once with /bin/sh, as a node would, so worker.out and worker.exit are real.
#pragma once

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/base/process.h"
#include "kiln/runner/slurm_command.h"

namespace kiln::runner::testing {

class ScriptedSlurm : public SlurmCommandRunner {
 public:
  bool run_script = true;                        // sbatch runs the script before it answers
  std::string sbatch_error;                      // set: sbatch exits 1 with this on stderr
  std::vector<std::string> states{"COMPLETED"};  // squeue -j answers in turn; the last repeats
  bool squeue_forgets = false;               // squeue -j answers nothing; sacct answers the state
  std::atomic<bool> controller_down{false};  // every tool fails as when slurmctld is unreachable
  std::string sinfo_out = "node1|idle|gpu:h200:2\nnode2|mixed|gpu:h200:2(S:0)\n";
  std::string squeue_all_out = "RUNNING\nPENDING\nPENDING\n";

  SlurmCommandResult run(const std::vector<std::string>& argv, std::chrono::seconds) override {
    std::lock_guard lock(mutex_);
    calls_.push_back(argv);
    SlurmCommandResult result;
    result.ran = true;
    if (controller_down) {
      result.exit_code = 1;
      result.err = argv[0] + ": error: Unable to contact slurm controller (connect failure)\n";
      return result;
    }
    const std::string& tool = argv[0];
    if (tool == "sbatch") {
      if (!sbatch_error.empty()) {
        result.exit_code = 1;
        result.err = sbatch_error;
        return result;
      }
      if (run_script) {
        ProcessSpec spec;
        spec.argv = {"/bin/sh", argv.back()};
        run_supervised(spec);
      }
      result.out = "4242\n";
    } else if (tool == "squeue" && std::find(argv.begin(), argv.end(), "-j") != argv.end()) {
      if (!squeue_forgets) result.out = next_state() + "|None\n";
    } else if (tool == "squeue") {
      result.out = squeue_all_out;
    } else if (tool == "sacct") {
      result.out = squeue_forgets ? next_state() + "\n" : "";
    } else if (tool == "sinfo") {
      result.out = sinfo_out;
    }
    return result;
  }

  std::vector<std::vector<std::string>> calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  bool called(const std::string& tool) {
    auto all = calls();
    return std::any_of(all.begin(), all.end(), [&](const auto& call) { return call[0] == tool; });
  }

 private:
  std::string next_state() {
    std::string state = states[std::min(next_, states.size() - 1)];
    ++next_;
    return state;
  }

  std::mutex mutex_;
  std::vector<std::vector<std::string>> calls_;
  size_t next_ = 0;
};

}  // namespace kiln::runner::testing
