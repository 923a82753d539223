// Fuzz target: the MCP JSON-RPC message path, as `kiln mcp` runs it. The input is a session's
// worth of newline-separated messages (what a client writes on stdin); each line goes through
// parse_json_text and, when it is JSON, through one Session: parse_message, the lifecycle,
// dispatch, batches, cancellation, resources, prompts and tools/call, whose arguments are
// validated against a schema that uses every keyword tool schemas may use.
//
// Properties: nothing crashes or throws out of the session; every reply is a JSON-RPC 2.0
// message with exactly one of result and error (or a notification), and is JSON on the wire.
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "kiln/mcp/json_rpc.h"
#include "kiln/mcp/server.h"
#include "kiln/mcp/session.h"

namespace {

using kiln::fuzz::check;
using kiln::mcp::json;

constexpr size_t kMaxLines = 64;

kiln::mcp::Tool echo_tool() {
  kiln::mcp::Tool tool;
  tool.name = "echo";
  tool.title = "Echo";
  tool.description = "Returns its arguments; reports progress and a log message first.";
  tool.input_schema = json::parse(R"({
    "type": "object",
    "properties": {
      "text": {"type": "string", "minLength": 1, "maxLength": 80, "pattern": "^[a-z ]*$"},
      "count": {"type": "integer", "minimum": 0, "maximum": 100, "default": 1},
      "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
      "mode": {"type": "string", "enum": ["fast", "slow"]},
      "flag": {"type": ["boolean", "null"]},
      "tags": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 4,
               "uniqueItems": true}
    },
    "required": ["text"],
    "additionalProperties": false
  })");
  tool.output_schema = json{{"type", "object"}};
  tool.handler = [](const json& arguments, kiln::mcp::CallContext& context) {
    context.progress(1, 2, "half way");
    context.log(kiln::mcp::LogLevel::kInfo, "echo", arguments);
    kiln::mcp::ToolResult result;
    result.structured = json{{"echo", arguments}};
    return result;
  };
  return tool;
}

const kiln::mcp::Server& server() {
  static const kiln::mcp::Server* instance = [] {
    spdlog::set_level(spdlog::level::off);  // the session logs each initialize
    auto* s = new kiln::mcp::Server(
        kiln::mcp::ServerInfo{"kiln", "kiln", "fuzz", "A server for the fuzz target."});
    check(s->tools().add(echo_tool()).ok(), "the echo tool registers");
    s->resources().add(
        kiln::mcp::Resource{"kiln://fuzz/readme", "readme", "Readme", "A text.", "text/plain", [] {
                              return kiln::Result<kiln::mcp::ResourceContents>(
                                  kiln::mcp::ResourceContents{"text/plain", "hi"});
                            }});
    s->resources().add(kiln::mcp::ResourceTemplate{
        "kiln://fuzz/{id}/{file}", "entry", "Entry", "One file of an entry.", "text/plain",
        [](const kiln::mcp::TemplateVariables& variables)
            -> kiln::Result<kiln::mcp::ResourceContents> {
          if (variables.at("id") == "missing") return kiln::make_error("no entry 'missing'");
          return kiln::mcp::ResourceContents{"text/plain",
                                             variables.at("id") + "/" + variables.at("file")};
        }});
    s->prompts().add(kiln::mcp::Prompt{
        "optimize",
        "Optimize",
        "Asks for a faster kernel.",
        {{"goal", "what to optimize", true}, {"style", "how", false}},
        [](const std::map<std::string, std::string>& arguments) -> kiln::Result<std::string> {
          return "Goal: " + arguments.at("goal");
        }});
    return s;
  }();
  return *instance;
}

// Checks every reply as the transports would write it; tool calls answer from their own threads.
class CheckingOutbox : public kiln::mcp::Outbox {
 public:
  void notify(const json& message, const json& /*about*/) override {
    check(message.is_object() && message.value("jsonrpc", "") == "2.0" &&
              message.contains("method") && !message.contains("id"),
          "a notification is a JSON-RPC 2.0 message with a method and no id");
    kiln::fuzz::check_wire(message, "a notification is JSON on the wire");
  }
  void respond(const json& /*id*/, std::optional<json> response) override {
    if (!response) return;  // a cancelled request gets no response
    check(response->is_object() && response->value("jsonrpc", "") == "2.0" &&
              response->contains("id") &&
              response->contains("result") != response->contains("error"),
          "a response is JSON-RPC 2.0 with an id and exactly one of result and error");
    kiln::fuzz::check_wire(*response, "a response is JSON on the wire");
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckingOutbox outbox;
  kiln::mcp::Session session(server(), outbox);
  size_t start = 0;
  for (size_t lines = 0; start <= input.size() && lines < kMaxLines; ++lines) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    const std::string line(input.substr(start, end - start));
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto parsed = kiln::mcp::parse_json_text(line);
    if (auto* rejected = std::get_if<kiln::mcp::RejectedMessage>(&parsed)) {
      outbox.respond(rejected->id, make_error_response(rejected->id, rejected->error));
      continue;
    }
    session.handle(std::get<json>(parsed));
  }
  session.drain();
  return 0;
}
