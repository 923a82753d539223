// One poll of Slurm per runner, not per job: a thread that asks for the state of every Slurm
// job the runner has in flight in one `squeue -j ID1,ID2,...` (and one sacct for those squeue
// forgot) per interval (SlurmBackend::statuses), and hands each job's answer to the execution
// waiting on it. The controller sees one RPC per runner per interval however many jobs are in
// flight (runner/README.md, "Slurm", says what that buys). With no job watched the thread sleeps.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "kiln/runner/slurm_backend.h"

namespace kiln::runner {

class SlurmJobPoller {
 public:
  SlurmJobPoller(SlurmBackend& backend, std::chrono::milliseconds interval);
  ~SlurmJobPoller();  // stops the thread; a waiter still in next() gets nullopt
  SlurmJobPoller(const SlurmJobPoller&) = delete;
  SlurmJobPoller& operator=(const SlurmJobPoller&) = delete;

  // Adds a job to every poll from now on, until forget().
  void watch(const std::string& job_id);
  void forget(const std::string& job_id);

  // The job's answer from the newest poll not yet handed out for it (the state, or the Error of
  // asking Slurm), waiting for the next poll when there is none: each answer once, so one
  // waiter per job sees every poll at most once. nullopt when `cancel` is set, the job is not
  // watched, or the poller stops, before an answer comes.
  std::optional<Result<SlurmJobStatus>> next(const std::string& job_id,
                                             const std::atomic<bool>& cancel);

  uint64_t polls() const;  // rounds of squeue so far (tests, measurement)

 private:
  struct Answer {
    uint64_t round = 0;       // the poll that gave it; 0: none yet
    uint64_t handed_out = 0;  // the round next() last returned
    Result<SlurmJobStatus> status = make_error("not polled yet");
  };
  void loop();

  SlurmBackend& backend_;
  const std::chrono::milliseconds interval_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;     // a poll ended, a job was watched, or stop
  std::map<std::string, Answer> jobs_;  // the jobs watched, each with its latest answer
  uint64_t started_ = 0;                // rounds started
  uint64_t finished_ = 0;               // rounds ended
  bool stopping_ = false;
  std::thread thread_;  // last: it starts with every field above ready
};

}  // namespace kiln::runner
