// The fixtures of the tasks-extension scenarios (tasks-*, SEP-2663): a tool that never
// becomes a task (greet), tools that may (slow_compute, confirm_delete, multi_input) and
// tools that run only as tasks (failing_job, protocol_error_job, test_tool_with_task).
#include <chrono>
#include <thread>

#include "fixtures.h"
#include "kiln/mcp/json_rpc.h"

namespace kiln::tools::conformance {
namespace {

using json = nlohmann::json;

mcp::Tool task_tool(std::string name, std::string description, mcp::TaskSupport support,
                    std::function<mcp::ToolResult(mcp::CallContext&)> work) {
  mcp::Tool tool = fixture_tool(name, name + " (conformance)", std::move(description), work);
  tool.task_support = support;
  return tool;
}

// Sleeps `seconds` in slices; false when the call was cancelled meanwhile.
bool sleep_unless_cancelled(double seconds, mcp::CallContext& context) {
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  while (std::chrono::steady_clock::now() < until) {
    if (context.cancelled()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return !context.cancelled();
}

mcp::ToolResult cancelled() {
  return mcp::ToolResult::error(mcp::ErrorCode::kRunFailed, "cancelled by the client");
}

bool accepted_true(const json& response, const char* property) {
  return response.is_object() && response.value("action", "") == "accept" &&
         response.contains("content") && response["content"].is_object() &&
         response["content"].value(property, false) == true;
}

mcp::Tool make_greet_tool() {
  mcp::Tool tool = fixture_tool("greet", "greet (conformance)", "returns Hello, {name}!",
                                [](mcp::CallContext&) { return text_result(""); });
  tool.input_schema["properties"] = {{"name", {{"type", "string"}}}};
  tool.handler = [](const json& arguments, mcp::CallContext&) {
    return text_result("Hello, " + arguments.value("name", std::string("World")) + "!");
  };
  return tool;
}

mcp::Tool make_slow_compute_tool() {
  mcp::Tool tool =
      task_tool("slow_compute", "sleeps `seconds`, then answers; a task where the client allows",
                mcp::TaskSupport::kOptional, [](mcp::CallContext&) { return text_result(""); });
  tool.input_schema["properties"] = {{"seconds", {{"type", "number"}, {"minimum", 0}}},
                                     {"label", {{"type", "string"}}}};
  tool.handler = [](const json& arguments, mcp::CallContext& context) {
    const double seconds = arguments.value("seconds", 1.0);
    if (!sleep_unless_cancelled(seconds, context)) return cancelled();
    return text_result("computed " + arguments.value("label", std::string("?")) + " in " +
                       std::to_string(seconds) + " s");
  };
  return tool;
}

}  // namespace

void add_task_fixtures(std::vector<mcp::Tool>& tools) {
  tools.push_back(make_greet_tool());
  tools.push_back(make_slow_compute_tool());
  tools.push_back(task_tool("failing_job", "fails after about a second; only as a task",
                            mcp::TaskSupport::kRequired, [](mcp::CallContext& context) {
                              if (!sleep_unless_cancelled(1, context)) return cancelled();
                              return mcp::ToolResult::error("failing_job always fails");
                            }));
  tools.push_back(task_tool("protocol_error_job", "ends in a protocol-level error; only as a task",
                            mcp::TaskSupport::kRequired, [](mcp::CallContext&) -> mcp::ToolResult {
                              mcp::fail(mcp::error_code::kInternalError,
                                        "protocol_error_job fails at the protocol level");
                            }));
  mcp::Tool confirm =
      task_tool("confirm_delete", "asks the user to confirm, then answers",
                mcp::TaskSupport::kOptional, [](mcp::CallContext&) { return text_result(""); });
  confirm.input_schema["properties"] = {{"filename", {{"type", "string"}}}};
  confirm.handler = [](const json& arguments, mcp::CallContext& context) {
    const std::string file = arguments.value("filename", std::string("file"));
    mcp::ToolResult outcome;
    auto got =
        answers({{"confirm", elicitation_request("Delete " + file + "?", "confirm", "boolean")}},
                context, outcome);
    if (!got) return outcome;
    return text_result(
        (accepted_true(got->value("confirm", json()), "confirm") ? "deleted " : "kept ") + file);
  };
  tools.push_back(std::move(confirm));
  tools.push_back(task_tool(
      "multi_input", "asks two questions at once, then answers", mcp::TaskSupport::kOptional,
      [](mcp::CallContext& context) {
        mcp::ToolResult outcome;
        auto got = answers({{"first", elicitation_request("Your name?", "name", "string")},
                            {"second", elicitation_request("Go on?", "confirm", "boolean")}},
                           context, outcome);
        if (!got) return outcome;
        return text_result("answered " + std::to_string(got->size()) + " questions");
      }));
  mcp::Tool gathers = task_tool(
      "test_tool_with_task", "asks a name through an input_required round, then runs as a task",
      mcp::TaskSupport::kRequired, [](mcp::CallContext& context) {
        std::string name = elicited(context.input(), "user_name", "name");
        if (!name.empty()) return text_result("Hello, " + name + "!");
        if (!context.input().responses.empty())
          return mcp::ToolResult::error("inputResponses carry no user_name: answer that request");
        return ask({{"user_name", elicitation_request("What is your name?", "name", "string")}});
      });
  gathers.gathers_input_first = true;
  tools.push_back(std::move(gathers));
}

}  // namespace kiln::tools::conformance
