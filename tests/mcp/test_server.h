// A small Server for the session and transport tests: a fast tool, a slow
// cancellable one, one that reports progress, one that logs, one that throws,
// plus a resource, a resource template and a prompt.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>

#include "kiln/mcp/server.h"

namespace kiln::mcp::testing {

using json = nlohmann::json;
using namespace std::chrono_literals;

// What the slow tool did, so a test can wait for it to start and finish.
struct SlowProbe {
  std::mutex mutex;
  std::condition_variable changed;
  bool started = false;
  bool finished = false;
  bool saw_cancel = false;

  bool wait_started(std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, timeout, [this] { return started; });
  }
  bool is_finished() {
    std::lock_guard lock(mutex);
    return finished;
  }
  bool wait_finished(std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, timeout, [this] { return finished; });
  }
};

inline json flat_object_schema(json properties, json required = json::array()) {
  return json{{"type", "object"},
              {"properties", std::move(properties)},
              {"required", std::move(required)},
              {"additionalProperties", false}};
}

inline Tool make_tool(const std::string& name) {
  Tool tool;
  tool.name = name;
  tool.title = "Test tool " + name;
  tool.description = "A tool for kiln's MCP tests.";
  tool.input_schema = flat_object_schema(json::object());
  tool.output_schema = json{{"type", "object"}};
  tool.handler = [](const json&, CallContext&) { return ToolResult{}; };
  return tool;
}

// echo {text}: returns the text, structured and as text.
inline Tool echo_tool() {
  Tool tool = make_tool("echo");
  tool.input_schema = flat_object_schema({{"text", {{"type", "string"}}}}, {"text"});
  tool.handler = [](const json& arguments, CallContext&) {
    ToolResult result;
    result.structured = json{{"text", arguments["text"]}};
    result.text = arguments["text"].get<std::string>();
    return result;
  };
  return tool;
}

// slow {max_ms}: reports progress every 10 ms until cancelled or max_ms passed.
inline Tool slow_tool(std::shared_ptr<SlowProbe> probe) {
  Tool tool = make_tool("slow");
  tool.input_schema = flat_object_schema({{"max_ms", {{"type", "integer"}, {"minimum", 0}}}});
  tool.handler = [probe](const json& arguments, CallContext& context) {
    {
      std::lock_guard lock(probe->mutex);
      probe->started = true;
    }
    probe->changed.notify_all();
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(arguments.value("max_ms", 10000));
    int step = 0;
    while (!context.cancelled() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(10ms);
      context.progress(++step);
    }
    {
      std::lock_guard lock(probe->mutex);
      probe->saw_cancel = context.cancelled();
      probe->finished = true;
    }
    probe->changed.notify_all();
    ToolResult result;
    result.structured = json{{"steps", step}};
    result.text = std::to_string(step) + " steps";
    return result;
  };
  return tool;
}

// uncancellable {ms}: ignores cancellation and reports progress every millisecond for `ms`.
inline Tool uncancellable_tool() {
  Tool tool = make_tool("uncancellable");
  tool.input_schema = flat_object_schema({{"ms", {{"type", "integer"}, {"minimum", 0}}}});
  tool.handler = [](const json& arguments, CallContext& context) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(arguments.value("ms", 1000));
    int step = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
      context.progress(++step);
    }
    ToolResult result;
    result.text = std::to_string(step) + " steps";
    return result;
  };
  return tool;
}

// progress: reports 1, 1 (repeated, so dropped), 2 and 3 of 3, then returns.
inline Tool progress_tool() {
  Tool tool = make_tool("progress");
  tool.handler = [](const json&, CallContext& context) {
    context.progress(1, 3, "one");
    context.progress(1, 3, "one again");
    context.progress(2, 3, "two");
    context.progress(3, 3, "three");
    ToolResult result;
    result.structured = json{{"done", true}};
    result.text = "done";
    return result;
  };
  return tool;
}

// log: logs once at debug, info and warning.
inline Tool log_tool() {
  Tool tool = make_tool("log");
  tool.handler = [](const json&, CallContext& context) {
    context.log(LogLevel::kDebug, "test", "a debug line");
    context.log(LogLevel::kInfo, "test", "an info line");
    context.log(LogLevel::kWarning, "test", "a warning line");
    ToolResult result;
    result.text = "logged";
    return result;
  };
  return tool;
}

// needs_sampling: declares that it needs the client's sampling capability.
inline Tool needs_sampling_tool() {
  Tool tool = make_tool("needs_sampling");
  tool.required_client_capabilities = {{"sampling", json::object()}};
  return tool;
}

// ask_name: asks the user's name (a multi round-trip request) with request state
// "asked", then greets whoever the retry names.
inline Tool ask_name_tool() {
  Tool tool = make_tool("ask_name");
  tool.handler = [](const json&, CallContext& context) {
    ToolResult result;
    const ClientInput& input = context.input();
    if (input.request_state != "asked" || !input.responses.contains("name")) {
      result.input_required = InputRequired{
          {{"name", {{"method", "elicitation/create"}, {"params", {{"message", "Your name?"}}}}}},
          "asked"};
      return result;
    }
    result.text = "hello " + input.responses["name"]["content"]["name"].get<std::string>();
    return result;
  };
  return tool;
}

// ask_client {method}: asks the client mid-call (CallContext::ask) with one request of `method`
// (default sampling/createMessage) under the key "q"; answers the client's result as
// structured content, or the reason it could not ask as an error. Not in make_test_server:
// the tests of server-to-client requests add it.
inline Tool ask_client_tool() {
  Tool tool = make_tool("ask_client");
  tool.input_schema = flat_object_schema({{"method", {{"type", "string"}}}});
  tool.handler = [](const json& arguments, CallContext& context) {
    const std::string method = arguments.value("method", "sampling/createMessage");
    auto answer = context.ask({{"q", {{"method", method}, {"params", {{"message", "hi"}}}}}});
    if (!answer) return ToolResult::error(answer.error().message);
    ToolResult result;
    result.structured = json{{"answer", (*answer)["q"]}};
    result.text = (*answer)["q"].dump();
    return result;
  };
  return tool;
}

// fail: throws, as a buggy handler would.
inline Tool throwing_tool() {
  Tool tool = make_tool("fail");
  tool.handler = [](const json&, CallContext&) -> ToolResult {
    throw std::runtime_error("the handler broke");
  };
  return tool;
}

inline std::unique_ptr<Server> make_test_server(std::shared_ptr<SlowProbe> probe) {
  ServerInfo info;
  info.name = "kiln-test";
  info.version = "0.0.1";
  info.instructions = "test server";
  auto server = std::make_unique<Server>(info);
  for (Tool tool : {echo_tool(), slow_tool(std::move(probe)), uncancellable_tool(), progress_tool(),
                    log_tool(), throwing_tool(), needs_sampling_tool(), ask_name_tool()}) {
    auto status = server->tools().add(std::move(tool));
    if (!status) throw std::logic_error(status.error().message);
  }
  server->resources().add(
      Resource{"kiln://task", "task", "The task", "the task contract", "text/plain", [] {
                 return Result<ResourceContents>(ResourceContents{"text/plain", "task text"});
               }});
  ResourceTemplate zoo{"kiln://zoo/{id}/{file}",
                       "zoo",
                       "Zoo file",
                       "a zoo entry's file",
                       "text/plain",
                       [](const TemplateVariables& v) {
                         return Result<ResourceContents>(
                             ResourceContents{"text/plain", v.at("id") + "/" + v.at("file")});
                       }};
  zoo.complete["id"] = [](const std::map<std::string, std::string>&) {
    return std::vector<std::string>{"gemm_a", "gemm_b", "softmax"};
  };
  zoo.complete["file"] = [](const std::map<std::string, std::string>& context) {
    return context.count("id") && context.at("id") == "softmax"
               ? std::vector<std::string>{"kernel.cu"}
               : std::vector<std::string>{"kernel.cu", "meta.json", "NOTES.md"};
  };
  server->resources().add(std::move(zoo));
  server->prompts().add(
      Prompt{"optimize",
             "Optimize",
             "the run's prompt",
             {PromptArgument{"goal", "what to optimize", true,
                             [](const std::map<std::string, std::string>&) {
                               return std::vector<std::string>{"latency", "throughput", "lanes"};
                             }}},
             [](const std::map<std::string, std::string>& args) {
               return Result<std::string>("optimize for " + args.at("goal"));
             }});
  return server;
}

}  // namespace kiln::mcp::testing
