#include "kiln/runner/slurm_job_poller.h"

#include <vector>

namespace kiln::runner {

SlurmJobPoller::SlurmJobPoller(SlurmBackend& backend, std::chrono::milliseconds interval)
    : backend_(backend), interval_(interval), thread_([this] { loop(); }) {}

SlurmJobPoller::~SlurmJobPoller() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void SlurmJobPoller::watch(const std::string& job_id) {
  {
    std::lock_guard lock(mutex_);
    jobs_.try_emplace(job_id);
  }
  changed_.notify_all();
}

void SlurmJobPoller::forget(const std::string& job_id) {
  std::lock_guard lock(mutex_);
  jobs_.erase(job_id);
}

uint64_t SlurmJobPoller::polls() const {
  std::lock_guard lock(mutex_);
  return finished_;
}

std::optional<Result<SlurmJobStatus>> SlurmJobPoller::next(const std::string& job_id,
                                                           const std::atomic<bool>& cancel) {
  std::unique_lock lock(mutex_);
  while (true) {
    auto job = jobs_.find(job_id);
    if (stopping_ || cancel || job == jobs_.end()) return std::nullopt;
    if (job->second.round > job->second.handed_out) {
      job->second.handed_out = job->second.round;
      return job->second.status;
    }
    // Short waits, so a cancel is seen within 20 ms without a notification of its own.
    changed_.wait_for(lock, std::chrono::milliseconds(20));
  }
}

void SlurmJobPoller::loop() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (jobs_.empty()) {
      changed_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
      continue;
    }
    std::vector<std::string> ids;
    for (const auto& entry : jobs_) ids.push_back(entry.first);
    const uint64_t round = ++started_;
    lock.unlock();
    auto answers = backend_.statuses(ids);  // bounded: every Slurm command has a deadline
    lock.lock();
    for (auto& [id, status] : answers) {
      auto job = jobs_.find(id);
      if (job == jobs_.end()) continue;  // forgotten meanwhile
      job->second.round = round;
      job->second.status = std::move(status);
    }
    finished_ = round;
    changed_.notify_all();
    changed_.wait_for(lock, interval_, [&] { return stopping_; });
  }
}

}  // namespace kiln::runner
