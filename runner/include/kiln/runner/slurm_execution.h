// One kiln job as one Slurm job: the Slurm counterpart of execute_job (job_execution.h).
// Writes the batch script into the shared job folder, submits it, follows its state through the
// executor's one SlurmJobPoller (one squeue for all jobs in flight; every wait with a deadline: the
// queue wait, the run, slurmctld's silence), follows the worker's event lines in worker.out as they
// arrive, and turns the end into a RESULT: the worker's own, passed through the same check_result
// as a local job, or an error result that names what Slurm did (cancelled, preempted, node failure,
// time limit, refused submission, a queue that did not start the job in time, slurmctld
// unreachable) and what to do.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>

#include "kiln/runner/job_execution.h"
#include "kiln/runner/slurm_backend.h"
#include "kiln/runner/slurm_job_poller.h"
#include "kiln/runner/slurm_job_script.h"

namespace kiln::runner {

struct SlurmExecutorOptions {
  SlurmJobSettings job;
  double queue_seconds = 600;            // longest wait in Slurm's queue before the runner gives up
  double controller_grace_seconds = 60;  // longest slurmctld may go unanswered, in a row
  double run_grace_seconds = 30;         // past the job's limit before the runner scancels it
  std::chrono::milliseconds poll{500};   // one squeue for all jobs in flight per poll
};

class SlurmExecutor {
 public:
  SlurmExecutor(SlurmBackend& backend, SlurmExecutorOptions options);

  JobOutcome execute(const JobLaunch& launch, const std::atomic<bool>& cancel,
                     const std::function<void(nlohmann::json event)>& on_event);

  uint64_t polls() const { return poller_.polls(); }  // squeue rounds so far

  // For /v1/health: {"partition", "nodes", "idle_nodes", "gpus", "jobs_pending",
  // "jobs_running", "expected_wait_s", "mean_run_s"}, or {"partition", "error"}.
  nlohmann::json health();

 private:
  void record_run(double seconds);

  SlurmBackend& backend_;
  SlurmExecutorOptions options_;
  SlurmJobPoller poller_;  // one for every job this executor runs
  std::mutex mutex_;
  double run_seconds_total_ = 0;  // over the jobs this runner saw run to an end
  int runs_ = 0;
};

}  // namespace kiln::runner
