#include "kiln/mcp/tasks.h"

#include <condition_variable>
#include <ctime>
#include <optional>

#include "kiln/mcp/feature_methods.h"
#include "kiln/mcp/json_rpc.h"
#include "kiln/mcp/tool_registry.h"

namespace kiln::mcp {

using json = nlohmann::json;

// One task: its job (same id) runs the work; this holds what the job store does not know.
struct TaskStore::Task {
  std::string id;
  Clock::time_point created = Clock::now();
  std::mutex mutex;  // guards everything below
  std::condition_variable answered;
  Clock::time_point updated = created;
  bool cancelled = false;
  std::optional<RpcError> failure;  // the work threw RpcFailure
  json pending = json::object();    // input requests not answered yet, by key
  json answers = json::object();    // what tasks/update brought for the current ask

  // CallContext::ask inside the task: parks the work until every request is answered.
  Result<json> ask(const json& requests, CallContext& job) {
    const Error ended{"the task was cancelled while it waited for input"};
    std::unique_lock lock(mutex);
    if (cancelled || job.cancelled()) return ended;
    pending = requests.is_object() ? requests : json::object();
    answers = json::object();
    updated = Clock::now();
    // Slices, so a cancellation through the job store (kiln shutting down) ends the wait too.
    while (!pending.empty() && !cancelled && !job.cancelled())
      answered.wait_for(lock, std::chrono::milliseconds(100));
    if (cancelled || job.cancelled()) return ended;
    updated = Clock::now();
    return std::exchange(answers, json::object());
  }
};

namespace {

std::string iso_time(std::chrono::system_clock::time_point when) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &utc);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()) %
                  std::chrono::milliseconds(1000);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03dZ", buffer, static_cast<int>(ms.count()));
  return out;
}

// The CallToolResult a finished task inlines, as tools/call would have answered it.
json call_result(const ToolResult& result) {
  json out = to_call_result(result);
  for (const auto& block : result.extra_content) out["content"].push_back(block);
  return out;
}

json rpc_error_json(const RpcError& error) {
  json out{{"code", error.code}, {"message", error.message}};
  if (!error.data.is_null()) out["data"] = error.data;
  return out;
}

}  // namespace

bool declares_tasks(const json& client_capabilities) {
  if (!client_capabilities.is_object()) return false;
  auto extensions = client_capabilities.find("extensions");
  return extensions != client_capabilities.end() && extensions->is_object() &&
         extensions->contains(kTasksExtension);
}

json tasks_capability() { return json{{"extensions", {{kTasksExtension, json::object()}}}}; }

bool is_task_method(const std::string& method) {
  return method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel";
}

TaskStore::TaskStore(std::shared_ptr<JobStore> jobs, TaskLimits limits)
    : jobs_(std::move(jobs)), limits_(limits) {}

Result<json> TaskStore::create(const std::string& tool, Work work) {
  auto task = std::make_shared<Task>();
  auto id = jobs_->start(tool, [task, work = std::move(work)](CallContext& job) -> ToolResult {
    job.set_asker([task, &job](const json& requests) { return task->ask(requests, job); });
    try {
      return work(job);
    } catch (const RpcFailure& failure) {
      std::lock_guard lock(task->mutex);
      task->failure = failure.error;
      return ToolResult::error(ErrorCode::kInternal, failure.error.message);
    }
  });
  if (!id) return make_error(id.error().message);
  task->id = *id;
  jobs_->keep(*id);
  {
    // In tasks_ before the CreateTaskResult leaves: an immediate tasks/get finds it.
    std::lock_guard lock(mutex_);
    forget_expired();
    tasks_[*id] = task;
  }
  std::lock_guard lock(task->mutex);
  json created = envelope(*task, "working", task->created);
  created["resultType"] = "task";
  return created;
}

json TaskStore::answer(const std::string& method, const json& params,
                       const ProtocolContext& context) {
  if (!declares_tasks(context.client_capabilities))
    fail(error_code::kMissingRequiredClientCapability,
         method + " belongs to the " + std::string(kTasksExtension) +
             " extension: declare it under extensions in the request's clientCapabilities",
         json{{"requiredCapabilities", tasks_capability()}});
  auto task = find(params, method);
  if (method == "tasks/get") return get(*task);
  if (method == "tasks/update") update(*task, params);
  if (method == "tasks/cancel") cancel(*task);
  return json::object();  // the ack: the new state shows in the next tasks/get
}

std::shared_ptr<TaskStore::Task> TaskStore::find(const json& params, const std::string& method) {
  const std::string id = required_string(params, "taskId", method);
  std::lock_guard lock(mutex_);
  forget_expired();
  auto it = tasks_.find(id);
  if (it == tasks_.end())
    fail(error_code::kInvalidParams,
         "unknown task " + id + ": it never existed in this kiln process or its ttlMs passed",
         json{{"taskId", id}});
  return it->second;
}

json TaskStore::envelope(const Task& task, const std::string& status,
                         Clock::time_point updated) const {
  return json{{"taskId", task.id},
              {"status", status},
              {"createdAt", iso_time(task.created)},
              {"lastUpdatedAt", iso_time(updated)},
              {"ttlMs", limits_.ttl_ms},
              {"pollIntervalMs", limits_.poll_interval_ms}};
}

json TaskStore::get(Task& task) {
  CallContext quiet = CallContext::detached();
  std::optional<JobStatus> job = jobs_->wait(task.id, std::chrono::milliseconds(0), quiet);
  std::lock_guard lock(task.mutex);
  if (task.cancelled) return envelope(task, "cancelled", task.updated);
  if (!job)  // pushed out of the job store by newer jobs (JobLimits::max_kept)
    fail(error_code::kInvalidParams,
         "task " + task.id + " is no longer kept: more than " +
             std::to_string(jobs_->limits().max_kept) + " newer jobs pushed it out",
         json{{"taskId", task.id}});
  if (job->state == JobState::kLost) {
    json out = envelope(task, "failed", task.updated);
    out["error"] = rpc_error_json(
        {error_code::kInternalError, "the task's work was lost: call the tool again", nullptr});
    return out;
  }
  if (job->state == JobState::kDone) {
    const auto ended = task.created + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(job->elapsed_s));
    json out = envelope(task, task.failure ? "failed" : "completed", std::max(ended, task.updated));
    if (task.failure)
      out["error"] = rpc_error_json(*task.failure);
    else
      out["result"] = call_result(*job->result);
    return out;
  }
  if (!task.pending.empty()) {
    json out = envelope(task, "input_required", task.updated);
    out["inputRequests"] = task.pending;
    return out;
  }
  return envelope(task, "working", task.updated);
}

void TaskStore::update(Task& task, const json& params) {
  auto responses = params.find("inputResponses");
  if (responses == params.end() || !responses->is_object())
    fail(error_code::kInvalidParams,
         "tasks/update needs an object \"inputResponses\" keyed like the task's inputRequests");
  const json& given = *responses;
  std::lock_guard lock(task.mutex);
  // Keys the task is not waiting for are ignored: a late or repeated answer does no harm.
  json still = json::object();
  for (auto& [key, request] : task.pending.items()) {
    if (given.contains(key))
      task.answers[key] = given.at(key);
    else
      still[key] = request;
  }
  task.pending = std::move(still);
  task.updated = Clock::now();
  if (task.pending.empty()) task.answered.notify_all();
}

void TaskStore::cancel(Task& task) {
  // A task that already ended stays as it ended: the ack is the same (idempotent).
  if (!jobs_->cancel(task.id)) return;
  std::lock_guard lock(task.mutex);
  task.cancelled = true;
  task.updated = Clock::now();
  task.answered.notify_all();
}

void TaskStore::forget_expired() {
  const auto now = Clock::now();
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    const bool expired = now - it->second->created > std::chrono::milliseconds(limits_.ttl_ms);
    CallContext quiet = CallContext::detached();
    // A task still at work is kept past its ttlMs until it ends.
    if (expired) {
      auto job = jobs_->wait(it->first, std::chrono::milliseconds(0), quiet);
      if (!job || job->state != JobState::kRunning) {
        jobs_->discard(it->first);
        it = tasks_.erase(it);
        continue;
      }
    }
    ++it;
  }
}

}  // namespace kiln::mcp
