// What an MCP server offers: its identity and its tools, resources and prompts.
// Filled before serving and read-only afterwards, so sessions share it freely.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "kiln/mcp/input_required.h"
#include "kiln/mcp/job_store.h"
#include "kiln/mcp/prompt_registry.h"
#include "kiln/mcp/resource_registry.h"
#include "kiln/mcp/tasks.h"
#include "kiln/mcp/tool_registry.h"

namespace kiln::mcp {

struct ServerInfo {
  std::string name = "kiln";
  std::string title = "kiln";
  std::string version;
  std::string instructions;  // sent in the initialize result
};

class Server {
 public:
  explicit Server(ServerInfo info) : info_(std::move(info)) {}

  const ServerInfo& info() const { return info_; }
  ToolRegistry& tools() { return tools_; }
  const ToolRegistry& tools() const { return tools_; }
  ResourceRegistry& resources() { return resources_; }
  const ResourceRegistry& resources() const { return resources_; }
  PromptRegistry& prompts() { return prompts_; }
  const PromptRegistry& prompts() const { return prompts_; }
  // Seals the requestState of input-required results (one key per process).
  const RequestStateSeal& request_state_seal() const { return seal_; }
  // The jobs of long calls (long_call.h), shared by every session of this process.
  const std::shared_ptr<JobStore>& jobs() const { return jobs_; }
  // The tasks of the tasks extension (tasks.h), whose work runs as jobs of jobs().
  TaskStore& tasks() const { return *tasks_; }
  // How long a tools/call of a 2025 session waits for the client to answer a request kiln sent
  // it (sampling, elicitation, roots; client_requests.h) before it gives up. Elicitation waits
  // on a person, so the default is generous.
  std::chrono::milliseconds client_request_timeout() const { return client_request_timeout_; }
  void set_client_request_timeout(std::chrono::milliseconds timeout) {
    client_request_timeout_ = timeout;
  }

 private:
  ServerInfo info_;
  ToolRegistry tools_;
  ResourceRegistry resources_;
  PromptRegistry prompts_;
  RequestStateSeal seal_;
  std::chrono::milliseconds client_request_timeout_{std::chrono::minutes(10)};
  std::shared_ptr<JobStore> jobs_ = std::make_shared<JobStore>();
  std::unique_ptr<TaskStore> tasks_ = std::make_unique<TaskStore>(jobs_);
};

}  // namespace kiln::mcp
