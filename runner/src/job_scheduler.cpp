#include "kiln/runner/job_scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <ctime>
#include <random>

#include "kiln/base/file.h"
#include "kiln/base/sha256.h"
#include "kiln/runner/gpu_lease.h"
#include "kiln/runner/job_execution.h"
#include "kiln/runner/protocol/job_fields.h"

namespace kiln::runner {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using WallClock = std::chrono::system_clock;

struct JobScheduler::Job {
  std::string id;
  JobKind kind = JobKind::kBenchmark;
  ResultExpectations expect;
  fs::path dir;
  double job_seconds = 600;
  JobState state = JobState::kQueued;
  std::string stage = "start";
  int gpu = -1;
  std::vector<json> events;  // events[i] has seq i + 1
  size_t event_bytes = 0;
  size_t dropped_events = 0;
  json result;  // null until the job ends
  std::atomic<bool> cancel{false};
  Clock::time_point submitted = Clock::now();
  WallClock::time_point submitted_wall = WallClock::now();
  std::optional<WallClock::time_point> started_wall;
  std::optional<WallClock::time_point> ended_wall;
};

namespace {

std::string random_hex(int digits) {
  std::random_device device;
  std::uniform_int_distribution<unsigned> nibble(0, 15);
  std::string out;
  for (int i = 0; i < digits; ++i) out.push_back("0123456789abcdef"[nibble(device)]);
  return out;
}

// A seed the candidate cannot predict; below 2^53 so every JSON reader keeps it exact.
uint64_t fresh_seed() {
  std::random_device device;
  uint64_t seed = (static_cast<uint64_t>(device()) << 32) ^ device();
  return seed & ((uint64_t{1} << 53) - 1);
}

std::string utc_text(WallClock::time_point when) {
  std::time_t seconds = WallClock::to_time_t(when);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

}  // namespace

JobScheduler::JobScheduler(SchedulerOptions options, const ContentCache& cache)
    : options_(std::move(options)), cache_(cache) {
  for (int gpu : options_.gpus) busy_[gpu] = "";
}

JobScheduler::~JobScheduler() { stop(); }

void JobScheduler::start() {
  std::lock_guard lock(mutex_);
  if (!dispatchers_.empty() || stopping_) return;
  for (int gpu : options_.gpus) dispatchers_.emplace_back([this, gpu] { dispatch(gpu); });
}

void JobScheduler::stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (const auto& id : queue_) {
      auto& job = *jobs_.at(id);
      end_job(job,
              make_error_result(
                  job.expect, "start", Failure::kCancelled,
                  "cancelled: the runner stopped before the job started; send it again", ""),
              true);
    }
    queue_.clear();
    for (auto& [id, job] : jobs_)
      if (job->state == JobState::kRunning) job->cancel = true;
    threads.swap(dispatchers_);
  }
  work_.notify_all();
  changed_.notify_all();
  for (auto& thread : threads) thread.join();
}

size_t JobScheduler::idle_gpus() const {
  size_t idle = 0;
  for (const auto& [gpu, id] : busy_) idle += id.empty() ? 1 : 0;
  return idle;
}

std::shared_ptr<JobScheduler::Job> JobScheduler::find(const std::string& id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

SubmitOutcome JobScheduler::submit(const JobRequest& request, const tasks::Task& task,
                                   const fs::path& candidate, const fs::path& incumbent) {
  SubmitOutcome outcome;
  std::unique_lock lock(mutex_);
  if (stopping_)
    return {SubmitOutcome::Kind::kFailed, "", 0,
            "the runner is stopping; send the job to another runner"};
  // Jobs an idle GPU is about to take do not count as waiting.
  if (queue_.size() >= options_.queue_limit + idle_gpus()) {
    return {SubmitOutcome::Kind::kQueueFull, "", 0,
            "the queue is full (" + std::to_string(options_.queue_limit) +
                " jobs waiting); retry later or use another runner"};
  }
  auto job = std::make_shared<Job>();
  job->id = "j-" + random_hex(16);
  job->kind = request.kind;
  job->job_seconds = request.limits.job_seconds;
  job->expect.kind = request.kind;
  job->expect.task_name = task.name;
  job->expect.task_sha256 = task.sha256;
  job->expect.candidate_sha256 = request.candidate_sha256;
  job->expect.incumbent_sha256 = request.incumbent_sha256;
  for (const auto& workload : options_.simulated_worker ? task.sim_workloads : task.workloads)
    job->expect.task_workloads.push_back(workload.name);
  job->expect.requested = request.workloads;
  job->expect.profile_workload = request.profile_workload;
  job->dir = cache_.jobs_dir() / job->id;

  std::error_code error;
  fs::create_directories(job->dir, error);
  if (!error)
    fs::copy_file(candidate, job->dir / "kernel.cu", fs::copy_options::overwrite_existing, error);
  if (!error && !incumbent.empty())
    fs::copy_file(incumbent, job->dir / "incumbent.cu", fs::copy_options::overwrite_existing,
                  error);
  if (error)
    return {SubmitOutcome::Kind::kFailed, "", 0,
            "cannot prepare the job folder " + job->dir.string() + ": " + error.message()};

  const std::string build_key = sha256_hex("worker " + options_.worker_sha256 + "\ntask " +
                                           task.sha256 + "\ncandidate " + request.candidate_sha256);
  fs::create_directories(cache_.build_dir(build_key), error);
  // job.json (runner/protocol/PROTOCOL.md, "Worker contract"), as the worker's JobSpec reads it.
  namespace field = protocol::job_field;
  json file{{field::kId, job->id},
            {field::kKind, kind_name(request.kind)},
            {field::kTask, {{field::kName, task.name}, {field::kSha256, task.sha256}}},
            {field::kTaskDir, fs::absolute(task.dir).string()},
            {field::kCandidate, fs::absolute(job->dir / "kernel.cu").string()},
            {field::kCandidateSha256, request.candidate_sha256},
            {field::kBuildDir, fs::absolute(cache_.build_dir(build_key)).string()},
            {field::kWorkloads, request.workloads},
            {field::kSeed, fresh_seed()},
            {field::kLimits, limits_to_json(request.limits)}};
  if (!incumbent.empty()) {
    file[field::kIncumbent] = fs::absolute(job->dir / "incumbent.cu").string();
    file[field::kIncumbentSha256] = request.incumbent_sha256;
  }
  if (request.kind == JobKind::kProfile)
    file[field::kProfile] = {{field::kWorkload, request.profile_workload}};
  if (request.kind == JobKind::kSanitize) {
    file[field::kSanitize] = {{field::kTools, request.sanitize_tools}};
    if (!request.sanitize_workload.empty())
      file[field::kSanitize][field::kWorkload] = request.sanitize_workload;
  }
  if (auto written = write_file(job->dir / protocol::kJobFileName, file.dump(2) + "\n"); !written)
    return {SubmitOutcome::Kind::kFailed, "", 0, written.error().message};

  outcome.id = job->id;
  outcome.position = queue_.size();
  jobs_[job->id] = job;
  queue_.push_back(job->id);
  append_event(*job, {{"event", "state"}, {"state", "queued"}, {"position", outcome.position}});
  spdlog::info("job {} queued: {} of task {} ({}), candidate {}, position {}", job->id,
               kind_name(job->kind), task.name, task.sha256.substr(0, 12),
               request.candidate_sha256.substr(0, 12), outcome.position);
  lock.unlock();
  work_.notify_one();
  changed_.notify_all();
  return outcome;
}

void JobScheduler::append_event(Job& job, json event) {
  bool is_worker_event = event.value("event", "") != "state";
  size_t bytes = event.dump().size();
  if (is_worker_event && (job.events.size() >= options_.max_events_per_job ||
                          job.event_bytes + bytes > options_.max_event_bytes_per_job)) {
    ++job.dropped_events;
    return;
  }
  job.event_bytes += bytes;
  event["seq"] = static_cast<int64_t>(job.events.size() + 1);
  event["t"] =
      std::round(std::chrono::duration<double>(Clock::now() - job.submitted).count() * 1000) / 1000;
  if (event.value("event", "") == "stage") job.stage = event.value("stage", job.stage);
  job.events.push_back(std::move(event));
}

void JobScheduler::end_job(Job& job, json result, bool cancelled) {
  job.state = cancelled ? JobState::kCancelled : JobState::kFinished;
  job.ended_wall = WallClock::now();
  json state{{"event", "state"},
             {"state", state_name(job.state)},
             {"status", result.value("status", "error")}};
  if (job.dropped_events) state["dropped_events"] = job.dropped_events;
  job.result = std::move(result);
  append_event(job, std::move(state));
  ended_.push_back(job.id);
  while (ended_.size() > options_.retained_jobs) {
    auto old = jobs_.find(ended_.front());
    if (old != jobs_.end()) {
      std::error_code ignored;
      fs::remove_all(old->second->dir, ignored);
      jobs_.erase(old);
    }
    ended_.pop_front();
  }
}

void JobScheduler::dispatch(int gpu) {
  GpuLease lease(options_.lock_dir, gpu);
  std::unique_lock lock(mutex_);
  while (true) {
    work_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    // Another process on this machine may be timing on this GPU: take no job until it is
    // done (another GPU's dispatcher may take the job meanwhile).
    if (!lease.try_acquire()) {
      if (!held_elsewhere_[gpu])
        spdlog::info("GPU {} is leased by another process; waiting for it", gpu);
      held_elsewhere_[gpu] = true;
      work_.wait_for(lock, std::chrono::milliseconds(200), [&] { return stopping_; });
      continue;
    }
    held_elsewhere_[gpu] = false;
    if (!lease.problem().empty()) spdlog::warn("{}", lease.problem());
    std::shared_ptr<Job> job = jobs_.at(queue_.front());
    queue_.pop_front();
    job->state = JobState::kRunning;
    job->gpu = gpu;
    job->started_wall = WallClock::now();
    busy_[gpu] = job->id;
    append_event(*job, {{"event", "state"}, {"state", "running"}, {"gpu", gpu}});
    changed_.notify_all();

    JobLaunch launch{job->id, options_.worker, job->dir, gpu, job->job_seconds, job->expect};
    lock.unlock();
    auto on_event = [&](json event) {
      {
        std::lock_guard events_lock(mutex_);
        append_event(*job, std::move(event));
      }
      changed_.notify_all();
    };
    JobOutcome outcome = options_.execute ? options_.execute(launch, job->cancel, on_event)
                                          : execute_job(launch, job->cancel, on_event);
    lease.release();
    lock.lock();
    job->stage = outcome.last_stage;
    busy_[gpu] = "";
    end_job(*job, std::move(outcome.result), outcome.cancelled);
    changed_.notify_all();
  }
}

json JobScheduler::snapshot(const Job& job) const {
  json out{{"id", job.id},
           {"kind", kind_name(job.kind)},
           {"state", state_name(job.state)},
           {"stage", job.stage},
           {"task", {{"name", job.expect.task_name}, {"sha256", job.expect.task_sha256}}},
           {"candidate_sha256", job.expect.candidate_sha256},
           {"submitted_at", utc_text(job.submitted_wall)}};
  if (job.gpu >= 0) out["gpu"] = job.gpu;
  if (job.started_wall) out["started_at"] = utc_text(*job.started_wall);
  if (job.ended_wall) out["ended_at"] = utc_text(*job.ended_wall);
  if (job.state == JobState::kQueued) {
    for (size_t i = 0; i < queue_.size(); ++i)
      if (queue_[i] == job.id) out["position"] = i;
  }
  if (is_final(job.state)) out["result"] = job.result;
  return out;
}

std::optional<json> JobScheduler::job(const std::string& id, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  auto job = find(id);
  if (!job) return std::nullopt;
  changed_.wait_for(lock, wait, [&] { return stopping_ || is_final(job->state); });
  return snapshot(*job);
}

std::optional<json> JobScheduler::events(const std::string& id, int64_t after,
                                         std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  auto job = find(id);
  if (!job) return std::nullopt;
  if (after < 0) after = 0;
  changed_.wait_for(lock, wait, [&] {
    return stopping_ || is_final(job->state) || static_cast<int64_t>(job->events.size()) > after;
  });
  json events = json::array();
  size_t begin = std::min(static_cast<size_t>(after), job->events.size());
  size_t end = std::min(job->events.size(), begin + options_.events_page);
  for (size_t i = begin; i < end; ++i) events.push_back(job->events[i]);
  return json{{"id", job->id},
              {"events", std::move(events)},
              {"next", static_cast<int64_t>(end)},
              {"more", end < job->events.size()},
              {"state", state_name(job->state)},
              {"stage", job->stage}};
}

std::optional<json> JobScheduler::cancel(const std::string& id, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  auto job = find(id);
  if (!job) return std::nullopt;
  if (job->state == JobState::kQueued) {
    queue_.erase(std::find(queue_.begin(), queue_.end(), id));
    end_job(*job,
            make_error_result(job->expect, "start", Failure::kCancelled,
                              "cancelled before it started", ""),
            true);
    spdlog::info("job {} cancelled while queued", id);
    changed_.notify_all();
  } else if (job->state == JobState::kRunning) {
    spdlog::info("job {} cancel requested in stage {}", id, job->stage);
    job->cancel = true;
    changed_.wait_for(lock, wait, [&] { return is_final(job->state); });
  }
  return snapshot(*job);
}

json JobScheduler::status() const {
  std::lock_guard lock(mutex_);
  json gpus = json::array();
  size_t running = 0;
  for (const auto& [gpu, id] : busy_) {
    auto elsewhere = held_elsewhere_.find(gpu);
    gpus.push_back({{"index", gpu},
                    {"busy", !id.empty()},
                    {"job", id.empty() ? json(nullptr) : json(id)},
                    {"leased_elsewhere", elsewhere != held_elsewhere_.end() && elsewhere->second}});
    running += id.empty() ? 0 : 1;
  }
  return json{{"gpus", std::move(gpus)},
              {"queue", {{"length", queue_.size()}, {"limit", options_.queue_limit}}},
              {"jobs_running", running}};
}

}  // namespace kiln::runner
