// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663) of protocol revision
// 2026-07-28: a tools/call from a client that declares the extension, to a tool that supports
// tasks, answers at once with a CreateTaskResult (resultType "task", taskId, status, ...) while
// its work runs as a job of the JobStore (job_store.h). The client polls tasks/get (status,
// and once terminal the inlined result or error), answers a task's input requests with
// tasks/update and stops it with tasks/cancel.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "kiln/base/result.h"
#include "kiln/mcp/call_context.h"
#include "kiln/mcp/job_store.h"
#include "kiln/mcp/protocol_context.h"
#include "kiln/mcp/tool.h"

namespace kiln::mcp {

inline constexpr const char* kTasksExtension = "io.modelcontextprotocol/tasks";

struct TaskLimits {
  int64_t ttl_ms = 3'600'000;       // a task is kept this long after its creation
  int64_t poll_interval_ms = 1000;  // how often a client should poll tasks/get
};

// Whether `client_capabilities` declares the tasks extension (under "extensions").
bool declares_tasks(const nlohmann::json& client_capabilities);
// {"extensions": {"io.modelcontextprotocol/tasks": {}}}: what a -32021 names as required,
// and what server/discover adds to the capabilities.
nlohmann::json tasks_capability();
// tasks/get, tasks/update, tasks/cancel (tasks/result and tasks/list are not part of it).
bool is_task_method(const std::string& method);

class TaskStore {
 public:
  explicit TaskStore(std::shared_ptr<JobStore> jobs, TaskLimits limits = {});

  using Work = std::function<ToolResult(CallContext& context)>;
  // Starts `work` as a task (a kept job: in tasks/get from now on) and returns its
  // CreateTaskResult. `work` may ask the client mid-work (CallContext::ask) and may throw
  // RpcFailure for a protocol-level error (the task then fails with that error). Refused when
  // the JobStore runs as many jobs as it may.
  Result<nlohmann::json> create(const std::string& tool, Work work);

  // The result of a task method; throws RpcFailure: -32021 when the request did not declare
  // the extension, -32602 for a task kiln does not know or malformed params.
  nlohmann::json answer(const std::string& method, const nlohmann::json& params,
                        const ProtocolContext& context);

 private:
  struct Task;
  using Clock = std::chrono::system_clock;

  std::shared_ptr<Task> find(const nlohmann::json& params, const std::string& method);
  nlohmann::json get(Task& task);
  void update(Task& task, const nlohmann::json& params);
  void cancel(Task& task);
  nlohmann::json envelope(const Task& task, const std::string& status,
                          Clock::time_point updated) const;
  void forget_expired();  // mutex_ held

  std::shared_ptr<JobStore> jobs_;
  TaskLimits limits_;
  std::mutex mutex_;  // guards tasks_
  std::map<std::string, std::shared_ptr<Task>> tasks_;
};

}  // namespace kiln::mcp
