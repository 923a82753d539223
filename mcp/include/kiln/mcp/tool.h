// A tool, declared once: its name, schemas, annotations and handler.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/mcp/call_context.h"
#include "kiln/mcp/input_required.h"

namespace kiln::mcp {

struct ToolAnnotations {
  bool read_only = true;
  bool destructive = false;
  bool idempotent = true;
  bool open_world = false;
};

// Why a call could not do its work: the `code` of the shared error shape (README.md, "Tool
// results: success, failure and findings"). One vocabulary for every tool.
enum class ErrorCode {
  kInvalidArguments,  // an argument breaks the inputSchema or the tool's own rules
  kNotFound,          // a named thing does not exist: task, workload, zoo entry, section, file
  kCompileError,      // the candidate does not build
  kWrongAnswer,       // the candidate ran and failed a correctness check or gate
  kRunFailed,         // the run stopped before a verdict: crash, time limit, cancellation
  kNoRunner,          // no GPU runner could take the job
  kRefused,           // a decision went against the call (record_candidate)
  kUnavailable,       // a part of kiln itself is missing or unusable (kb index, store, driver)
  kInternal,          // a kiln bug: the handler threw
  kFailed,            // a failure with no finer code
};

std::string_view error_code_name(ErrorCode code);

// The result of a tool's work. Failures of the work itself (compile error, no
// GPU) are results with is_error, never JSON-RPC errors; their structured content carries
// `error` (error_json), beside whatever facts the work produced. `text` carries the same
// facts as `structured`, compactly, for clients that show only text.
struct ToolResult {
  nlohmann::json structured = nlohmann::json::object();
  std::string text;
  bool is_error = false;
  // Content blocks sent after the text block: images, audio, embedded resources
  // (the conformance fixtures; the session appends them to the tools/call content).
  std::vector<nlohmann::json> extra_content;
  // Set when the work needs input from the client first (only when context.input().can_ask):
  // the call is answered with an InputRequiredResult instead.
  std::optional<InputRequired> input_required;

  // A failure with nothing but the error: structured {"error": {...}}, the text says the
  // message and the next step.
  static ToolResult error(ErrorCode code, std::string message, std::string next_step = "");
  static ToolResult error(std::string message);  // code kFailed

  // Marks this result as a failure: adds `error` to the structured content the work produced
  // and makes it isError. An empty next_step takes the code's default.
  ToolResult& fail(ErrorCode code, std::string message, std::string next_step = "");
};

// {"code", "message", "next_step"}: the shared error shape; an empty next_step takes the
// code's default (what an agent should do about that kind of failure).
nlohmann::json error_json(ErrorCode code, const std::string& message,
                          const std::string& next_step = "");

// The JSON Schema of error_json's object; ToolRegistry::add puts it in every outputSchema.
const nlohmann::json& error_schema();

// Whether a tools/call may become a task of the io.modelcontextprotocol/tasks extension
// (tasks.h): tools/list shows it as execution.taskSupport.
enum class TaskSupport {
  kForbidden,  // always answered in place
  kOptional,   // a task when the request declares the extension, else in place
  kRequired,   // only as a task: a request without the extension is refused with -32021
};

std::string_view task_support_name(TaskSupport support);

struct Tool {
  std::string name;  // ^[A-Za-z0-9_.-]{1,128}$ (MCP); kiln's own tools keep to ^[a-z_]+$
  std::string title;
  std::string description;  // under 1 KB: what it does and when to use it
  nlohmann::json input_schema;
  // The result's shape; ToolRegistry::add adds the shared `error` property, and turns a
  // top-level `required` into "these fields, or `error`" (output_schema_with_error).
  nlohmann::json output_schema;
  ToolAnnotations annotations;
  // Client capabilities the tool's work depends on (e.g. {"sampling": {}}); a call
  // from a client that did not declare them is refused with -32021.
  nlohmann::json required_client_capabilities = nlohmann::json::object();
  TaskSupport task_support = TaskSupport::kForbidden;
  // The tool gathers its input through input-required rounds first: a task-augmented call
  // without inputResponses runs in place (its input_required result goes back), and only the
  // call that brings them becomes a task.
  bool gathers_input_first = false;
  std::function<ToolResult(const nlohmann::json& arguments, CallContext& context)> handler;
};

}  // namespace kiln::mcp
