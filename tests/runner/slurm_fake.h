// A scripted Slurm for the runner's Slurm tests: answers sbatch, squeue, sacct, scancel and
// sinfo as a test sets it up (several jobs at once, each with its own ids and states), records
// every call, and (when asked) runs the submitted batch
// script at once with /bin/sh, as a node would, so worker.out and worker.exit are real.
#pragma once

#include <algorithm>
#include <atomic>
#include <map>
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
  std::vector<std::string> states{"COMPLETED"};  // each job's answers in turn; the last repeats
  bool squeue_forgets = false;               // squeue -j answers nothing; sacct answers the state
  std::atomic<bool> controller_down{false};  // every tool fails as when slurmctld is unreachable
  std::string sinfo_out = "node1|idle|gpu:h200:2\nnode2|mixed|gpu:h200:2(S:0)\n";
  std::string squeue_all_out = "RUNNING\nPENDING\nPENDING\n";

  // sbatch answers 4242, 4243, ...; squeue -j ID1,ID2 and sacct -j answer one line per id, each
  // job stepping through `states` on every query that names it.
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
    const auto jobs = std::find(argv.begin(), argv.end(), "-j");
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
      result.out = std::to_string(next_id_++) + "\n";
    } else if (tool == "squeue" && jobs != argv.end()) {
      if (!squeue_forgets)
        for (const auto& id : split_ids(*(jobs + 1)))
          result.out += id + "|" + next_state(id) + "|None\n";
    } else if (tool == "squeue") {
      result.out = squeue_all_out;
    } else if (tool == "sacct" && jobs != argv.end()) {
      if (squeue_forgets)
        for (const auto& id : split_ids(*(jobs + 1)))
          result.out += id + "|" + next_state(id) + "\n";
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
  // The `-j` lists of the squeue calls so far, e.g. {"4242", "4242,4243"}.
  std::vector<std::string> squeue_job_lists() {
    std::vector<std::string> lists;
    for (const auto& call : calls()) {
      auto jobs = std::find(call.begin(), call.end(), "-j");
      if (call[0] == "squeue" && jobs != call.end()) lists.push_back(*(jobs + 1));
    }
    return lists;
  }

 private:
  static std::vector<std::string> split_ids(const std::string& list) {
    std::vector<std::string> ids;
    size_t begin = 0;
    while (begin <= list.size()) {
      size_t comma = std::min(list.find(',', begin), list.size());
      ids.push_back(list.substr(begin, comma - begin));
      begin = comma + 1;
    }
    return ids;
  }
  std::string next_state(const std::string& id) {
    size_t& next = cursors_[id];
    std::string state = states[std::min(next, states.size() - 1)];
    ++next;
    return state;
  }

  std::mutex mutex_;
  std::vector<std::vector<std::string>> calls_;
  std::map<std::string, size_t> cursors_;
  int next_id_ = 4242;
};

}  // namespace kiln::runner::testing
