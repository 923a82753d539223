// The runner's jobs: one FIFO queue with a length limit, and one dispatcher per GPU
// that takes the oldest queued job and runs it (exclusive lease: a GPU never runs two
// jobs). Each job has a folder (job.json, kernel.cu, worker.log), an event log that
// clients page through, and in the end a RESULT.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kiln/runner/content_cache.h"
#include "kiln/runner/job_execution.h"
#include "kiln/runner/job_request.h"
#include "kiln/tasks/task.h"

namespace kiln::runner {

struct SchedulerOptions {
  std::vector<int> gpus;         // CUDA device ordinals, one dispatcher each
  size_t queue_limit = 16;       // jobs that may wait for a GPU
  std::filesystem::path worker;  // kiln-worker
  std::string worker_sha256;     // part of every build-cache key
  // The worker is kiln-worker-sim: it answers with the task's sim_workloads (and never scores),
  // so results are checked against those instead of the task's GPU workloads.
  bool simulated_worker = false;
  std::filesystem::path lock_dir;     // machine-wide GPU leases (GpuLease); empty: none
  size_t retained_jobs = 128;         // ended jobs kept (and their folders) for clients to read
  size_t max_events_per_job = 10000;  // further worker events are counted, not kept...
  size_t max_event_bytes_per_job = 2u << 20;  // ...and so are those past this many bytes
  size_t events_page = 500;                   // most events per GET .../events
  // How a job runs; empty: execute_job (a local worker). `kiln runner --slurm` sets the Slurm
  // executor here, and `gpus` then numbers its slots (jobs in flight in Slurm at once).
  std::function<JobOutcome(const JobLaunch&, const std::atomic<bool>&,
                           const std::function<void(nlohmann::json)>&)>
      execute;
};

struct SubmitOutcome {
  enum class Kind { kQueued, kQueueFull, kFailed } kind = Kind::kQueued;
  std::string id;
  size_t position = 0;  // jobs ahead of it in the queue
  std::string error;    // kQueueFull, kFailed
};

class JobScheduler {
 public:
  JobScheduler(SchedulerOptions options, const ContentCache& cache);
  ~JobScheduler();
  JobScheduler(const JobScheduler&) = delete;
  JobScheduler& operator=(const JobScheduler&) = delete;

  void start();  // one dispatcher thread per GPU
  void stop();   // cancels every job (killing workers) and joins the dispatchers

  // `task` was loaded from the cache (so its sha256 is the bundle's) and `candidate`
  // is the cached source file.
  SubmitOutcome submit(const JobRequest& request, const tasks::Task& task,
                       const std::filesystem::path& candidate,
                       const std::filesystem::path& incumbent = {});

  // GET /v1/jobs/{id}: waits up to `wait` for the job to end. Nullopt: no such job.
  std::optional<nlohmann::json> job(const std::string& id, std::chrono::milliseconds wait);
  // GET /v1/jobs/{id}/events: events with seq > after; waits up to `wait` for one.
  std::optional<nlohmann::json> events(const std::string& id, int64_t after,
                                       std::chrono::milliseconds wait);
  // DELETE /v1/jobs/{id}: a queued job ends at once; a running one when its worker is
  // gone (waits up to `wait` for that).
  std::optional<nlohmann::json> cancel(const std::string& id, std::chrono::milliseconds wait);

  // For /v1/health: {"gpus": [{"index", "busy", "job"}], "queue": {"length", "limit"},
  // "jobs_running"}.
  nlohmann::json status() const;

 private:
  struct Job;
  void dispatch(int gpu);
  void append_event(Job& job, nlohmann::json event);
  void end_job(Job& job, nlohmann::json result, bool cancelled);
  nlohmann::json snapshot(const Job& job) const;
  size_t idle_gpus() const;
  std::shared_ptr<Job> find(const std::string& id) const;

  SchedulerOptions options_;
  const ContentCache& cache_;
  mutable std::mutex mutex_;
  std::condition_variable work_;     // a job was queued, or stopping
  std::condition_variable changed_;  // any job changed (state, events)
  std::map<std::string, std::shared_ptr<Job>> jobs_;
  std::deque<std::string> queue_;
  std::deque<std::string> ended_;       // oldest first, for retention
  std::map<int, std::string> busy_;     // gpu -> job id ("" when idle)
  std::map<int, bool> held_elsewhere_;  // gpu -> another process held its lease at the last try
  std::vector<std::thread> dispatchers_;
  bool stopping_ = false;
};

}  // namespace kiln::runner
