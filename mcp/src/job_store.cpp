#include "kiln/mcp/job_store.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <random>
#include <regex>

#include "kiln/base/file.h"
#include "kiln/mcp/log_level.h"

namespace kiln::mcp {

using json = nlohmann::json;

struct JobStore::Job {
  std::string id;
  std::string tool;
  Clock::time_point started = Clock::now();
  std::optional<Clock::time_point> finished;
  int64_t started_unix = 0;
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);
  bool kept = false;
  std::optional<ToolResult> result;
  // Whoever waits for the job now: its progress and logs go there (relay()).
  std::mutex relay_mutex;
  CallContext* relay = nullptr;
};

namespace {

std::string new_job_id() {
  std::random_device device;
  std::uniform_int_distribution<uint64_t> draw;
  const uint64_t value = draw(device);
  static const char* kHex = "0123456789abcdef";
  std::string id = "job-";
  for (int shift = 60; shift >= 0; shift -= 4) id += kHex[(value >> shift) & 0xf];
  return id;
}

// Ids are file names in the directory: only what new_job_id makes is looked up there.
bool is_job_id(const std::string& id) {
  static const std::regex kId("^job-[0-9a-f]{16}$");
  return std::regex_match(id, kId);
}

bool process_alive(int64_t pid) {
  if (pid <= 0) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

json tool_result_json(const ToolResult& result) {
  return json{{"structuredContent", result.structured},
              {"text", result.text},
              {"isError", result.is_error},
              {"extraContent", result.extra_content}};
}

ToolResult tool_result_from_json(const json& value) {
  ToolResult result;
  result.structured = value.value("structuredContent", json::object());
  result.text = value.value("text", "");
  result.is_error = value.value("isError", false);
  for (const auto& block : value.value("extraContent", json::array()))
    result.extra_content.push_back(block);
  return result;
}

JobStore::JobStore(JobLimits limits) : limits_(limits) {}

JobStore::~JobStore() {
  {
    std::lock_guard lock(mutex_);
    // A job stopped here keeps its "running" file: a later process reports it lost, rather
    // than the result of a cancellation nobody asked for.
    closing_ = true;
    for (auto& [id, job] : jobs_)
      if (!job->finished) job->cancelled->store(true);
  }
  workers_.join_all();
}

void JobStore::set_directory(std::filesystem::path dir) {
  std::lock_guard lock(mutex_);
  dir_ = std::move(dir);
}

Result<std::string> JobStore::start(const std::string& tool, Work work) {
  workers_.reap();
  auto job = std::make_shared<Job>();
  job->tool = tool;
  job->started_unix = unix_now();
  std::lock_guard lock(mutex_);
  if (running_ >= limits_.max_running)
    return make_error(std::to_string(running_) +
                      " long calls are at work already, the most kiln runs at once; wait for "
                      "one (wait_job with its job_id), then call again");
  do job->id = new_job_id();
  while (jobs_.count(job->id));
  jobs_[job->id] = job;
  ++running_;
  workers_.start([this, job, work = std::move(work)] { run(job, work); });
  return job->id;
}

void JobStore::run(std::shared_ptr<Job> job, Work work) {
  // The job's own context: what it reports goes to the current waiter, if any.
  CallContext context(
      [job](json note) {
        std::lock_guard lock(job->relay_mutex);
        if (!job->relay) return;
        const json params = note.value("params", json::object());
        const std::string method = note.value("method", "");
        if (method == "notifications/progress") {
          std::optional<double> total;
          if (params.contains("total") && params["total"].is_number())
            total = params["total"].get<double>();
          job->relay->progress(params.value("progress", 0.0), total, params.value("message", ""));
        } else if (method == "notifications/message") {
          auto level = parse_log_level(params.value("level", "info"));
          job->relay->log(level.value_or(LogLevel::kInfo), params.value("logger", ""),
                          params.value("data", json()));
        }
      },
      "job", job->cancelled, std::make_shared<std::atomic<LogLevel>>(LogLevel::kDebug));
  ToolResult result;
  try {
    result = work(context);
  } catch (const std::exception& e) {
    result = ToolResult::error(ErrorCode::kInternal,
                               "internal error in `" + job->tool + "`: " + e.what(),
                               "this is a kiln bug, please report it with the arguments you sent");
  }
  {
    std::lock_guard lock(mutex_);
    job->result = std::move(result);
    job->finished = Clock::now();
    --running_;
    if (job->kept && !closing_) write(*job);
  }
  changed_.notify_all();
}

JobStatus JobStore::status_of(const Job& job) const {
  JobStatus status;
  status.id = job.id;
  status.tool = job.tool;
  status.state = job.finished ? JobState::kDone : JobState::kRunning;
  status.elapsed_s = seconds((job.finished ? *job.finished : Clock::now()) - job.started);
  if (job.finished) status.result = job.result;
  return status;
}

std::optional<JobStatus> JobStore::wait(const std::string& id, std::chrono::milliseconds budget,
                                        CallContext& waiter) {
  const auto deadline = Clock::now() + budget;
  std::shared_ptr<Job> job;
  {
    std::lock_guard lock(mutex_);
    if (auto it = jobs_.find(id); it != jobs_.end()) job = it->second;
  }
  if (!job) {
    // Another kiln process's job, through the directory: read again until it is done.
    for (;;) {
      auto status = read_from_disk(id);
      if (!status || status->state != JobState::kRunning || Clock::now() >= deadline ||
          waiter.cancelled())
        return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  }
  {
    std::lock_guard relay(job->relay_mutex);
    job->relay = &waiter;
  }
  std::unique_lock lock(mutex_);
  // Woken by the job's end; the slices notice the waiter's cancellation.
  while (!job->finished && !waiter.cancelled() && Clock::now() < deadline)
    changed_.wait_until(lock, std::min(deadline, Clock::now() + std::chrono::milliseconds(20)));
  JobStatus status = status_of(*job);
  lock.unlock();
  std::lock_guard relay(job->relay_mutex);
  if (job->relay == &waiter) job->relay = nullptr;
  return status;
}

void JobStore::keep(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second->kept) return;
  it->second->kept = true;
  kept_.push_back(id);
  write(*it->second);
  forget_oldest();
}

void JobStore::discard(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  it->second->cancelled->store(true);
  jobs_.erase(it);
  kept_.erase(std::remove(kept_.begin(), kept_.end(), id), kept_.end());
}

bool JobStore::cancel(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second->finished) return false;
  it->second->cancelled->store(true);
  return true;
}

std::vector<JobStatus> JobStore::list() const {
  std::lock_guard lock(mutex_);
  std::vector<JobStatus> out;
  for (const auto& id : kept_)
    if (auto it = jobs_.find(id); it != jobs_.end()) out.push_back(status_of(*it->second));
  return out;
}

void JobStore::write(const Job& job) const {
  if (dir_.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(dir_, error);
  json record{{"id", job.id},
              {"tool", job.tool},
              {"pid", static_cast<int64_t>(::getpid())},
              {"started_unix", job.started_unix},
              {"state", job.finished ? "done" : "running"}};
  if (job.finished) {
    record["elapsed_s"] = seconds(*job.finished - job.started);
    record["result"] = tool_result_json(*job.result);
  }
  // Whole or not at all: a reader never sees half a file.
  const auto temporary = dir_ / (job.id + ".json.tmp");
  if (write_file(temporary, record.dump()).ok())
    std::filesystem::rename(temporary, dir_ / (job.id + ".json"), error);
}

void JobStore::forget_oldest() {
  // In memory: the oldest finished jobs beyond the bound (a running one is never dropped).
  for (auto it = kept_.begin(); kept_.size() > limits_.max_kept && it != kept_.end();) {
    auto job = jobs_.find(*it);
    if (job != jobs_.end() && !job->second->finished) {
      ++it;
      continue;
    }
    jobs_.erase(*it);
    it = kept_.erase(it);
  }
  // On disk: the oldest files beyond the bound, whichever process wrote them.
  if (dir_.empty()) return;
  std::error_code error;
  std::vector<std::pair<std::filesystem::file_time_type, std::filesystem::path>> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, error))
    if (entry.path().extension() == ".json" && !jobs_.count(entry.path().stem().string()))
      files.emplace_back(entry.last_write_time(error), entry.path());
  const size_t room = limits_.max_kept > kept_.size() ? limits_.max_kept - kept_.size() : 0;
  if (files.size() <= room) return;
  std::sort(files.begin(), files.end());
  for (size_t i = 0; i < files.size() - room; ++i) std::filesystem::remove(files[i].second, error);
}

std::optional<JobStatus> JobStore::read_from_disk(const std::string& id) const {
  std::filesystem::path dir;
  {
    std::lock_guard lock(mutex_);
    dir = dir_;
  }
  if (dir.empty() || !is_job_id(id)) return std::nullopt;
  auto text = read_file(dir / (id + ".json"));
  if (!text) return std::nullopt;
  json record = json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!record.is_object()) return std::nullopt;
  JobStatus status;
  status.id = id;
  status.tool = record.value("tool", "");
  if (record.value("state", "") == "done" && record.contains("result")) {
    status.state = JobState::kDone;
    status.elapsed_s = record.value("elapsed_s", 0.0);
    status.result = tool_result_from_json(record["result"]);
    return status;
  }
  const int64_t pid = record.value("pid", int64_t{0});
  const bool alive = pid != ::getpid() && process_alive(pid);
  status.state = alive ? JobState::kRunning : JobState::kLost;
  status.elapsed_s = static_cast<double>(unix_now() - record.value("started_unix", unix_now()));
  return status;
}

}  // namespace kiln::mcp
