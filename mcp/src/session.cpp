#include "kiln/mcp/session.h"

#include <spdlog/spdlog.h>

#include "kiln/mcp/feature_methods.h"
#include "kiln/mcp/protocol_version.h"

namespace kiln::mcp {
namespace {

// A tools/call that sent no progress for this long sends "working, N s" (CallContext::Heartbeat):
// with the heartbeat's wake-ups, a client sees progress at least every 10 s of a long call.
constexpr std::chrono::milliseconds kHeartbeatInterval{5000};

// clientInfo.name for the log, "?" when it is absent or not a string.
std::string client_name(const json& params) {
  auto info = params.find("clientInfo");
  if (info == params.end() || !info->is_object()) return "?";
  auto name = info->find("name");
  return name != info->end() && name->is_string() ? name->get<std::string>() : "?";
}

// The 2025 revisions add resources/subscribe to what both eras declare; 2026-07-28 has no
// such method (its subscriptions/listen is not offered), so server/discover keeps it false.
json initialize_capabilities() {
  json capabilities = server_capabilities();
  capabilities["resources"]["subscribe"] = true;
  return capabilities;
}

json progress_token(const json& params) {
  auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return nullptr;
  auto token = meta->find("progressToken");
  if (token == meta->end() || !(token->is_string() || token->is_number_integer())) return nullptr;
  return *token;
}

// The tools/call result: the registry's result object, then the extra content blocks.
json call_result(const ToolResult& result) {
  json out = to_call_result(result);
  for (const auto& block : result.extra_content) out["content"].push_back(block);
  return out;
}

}  // namespace

Session::Session(const Server& server, Outbox& outbox)
    : server_(server), outbox_(outbox), client_requests_(server.client_request_timeout()) {
  change_listener_ = server_.resources().changes().add_listener(
      [this](const std::string& uri) { resource_changed(uri); });
}

Session::~Session() {
  server_.resources().changes().remove_listener(change_listener_);
  shutdown();
}

std::string Session::protocol_version() const {
  std::lock_guard lock(mutex_);
  return protocol_version_;
}

void Session::shutdown() {
  {
    std::lock_guard lock(mutex_);
    for (auto& [key, request] : in_flight_) request->cancelled->store(true);
  }
  workers_.join_all();
}

void Session::handle(const json& value) {
  if (!value.is_array()) {
    handle_one(value);
    return;
  }
  std::string version = protocol_version();
  if (!protocol_allows_batches(version)) {
    std::string why = version.empty() ? "a batch cannot open a session: send initialize on its own"
                                      : "JSON-RPC batches are not part of protocol revision " +
                                            version + "; send each message on its own";
    outbox_.respond(
        nullptr, make_error_response(nullptr, RpcError{error_code::kInvalidRequest, why, nullptr}));
    return;
  }
  if (value.empty()) {
    outbox_.respond(nullptr, make_error_response(nullptr, RpcError{error_code::kInvalidRequest,
                                                                   "empty batch", nullptr}));
    return;
  }
  for (const auto& item : value) handle_one(item);
}

void Session::handle_one(const json& value) {
  auto parsed = parse_message(value);
  if (auto* rejected = std::get_if<RejectedMessage>(&parsed)) {
    outbox_.respond(rejected->id, make_error_response(rejected->id, rejected->error));
    return;
  }
  const Message& message = std::get<Message>(parsed);
  if (message.is_request()) {
    handle_request(message);
  } else if (message.is_notification()) {
    handle_notification(message);
  } else {
    client_requests_.deliver(message);  // an answer to sampling, elicitation or roots
  }
}

void Session::handle_notification(const Message& message) {
  if (message.method == "notifications/initialized") {
    if (initialize_seen_) initialized_ = true;
  } else if (message.method == "notifications/cancelled") {
    if (!message.params.is_object() || !message.params.contains("requestId")) return;
    std::string key = id_key(message.params["requestId"]);
    std::shared_ptr<InFlight> request;
    {
      std::lock_guard lock(mutex_);
      auto it = in_flight_.find(key);
      if (it != in_flight_.end()) request = it->second;
    }
    if (!request) return;  // already finished, or never existed: ignore, as the spec says
    request->cancelled->store(true);
    spdlog::debug("request {} cancelled by the client", key);
    answer(message.params["requestId"], std::nullopt);
  }
  // Other notifications (roots/list_changed, ...) need no action.
}

void Session::handle_request(const Message& message) {
  const std::string key = id_key(message.id);
  auto request = std::make_shared<InFlight>();
  {
    std::lock_guard lock(mutex_);
    if (in_flight_.count(key)) {
      outbox_.respond(
          message.id,
          make_error_response(message.id, RpcError{error_code::kInvalidRequest,
                                                   "request id " + key +
                                                       " is already in use by a request in flight",
                                                   nullptr}));
      return;
    }
    in_flight_[key] = request;
  }
  try {
    const bool stateless = is_stateless_request(message);
    ProtocolContext context = stateless ? read_request_meta(message) : session_context();
    if (message.method == "tools/call" && (stateless || initialize_seen_)) {
      start_tool_call(message, context);
      return;
    }
    json result =
        stateless ? dispatch_stateless(message, context) : dispatch_initialize_era(message);
    answer(message.id, make_result(message.id, shape_result(context, message.method,
                                                            std::move(result), server_.info())));
  } catch (const RpcFailure& failure) {
    answer(message.id, make_error_response(message.id, failure.error));
  }
}

ProtocolContext Session::session_context() const {
  std::lock_guard lock(mutex_);
  ProtocolContext context;
  context.version = protocol_version_;
  context.client_capabilities = client_capabilities_;
  return context;
}

void Session::answer(const json& id, std::optional<json> response) {
  std::shared_ptr<InFlight> request;
  {
    std::lock_guard lock(mutex_);
    auto it = in_flight_.find(id_key(id));
    if (it == in_flight_.end()) return;
    request = it->second;
    if (request->answered.exchange(true)) return;  // cancelled earlier, or answered
    in_flight_.erase(it);
  }
  outbox_.respond(id, std::move(response));
}

json Session::dispatch_initialize_era(const Message& message) {
  const std::string& method = message.method;
  if (method == "initialize") return initialize(object_params(message));
  if (method == "ping") return json::object();
  const bool subscription = method == "resources/subscribe" || method == "resources/unsubscribe";
  bool known = is_feature_method(method) || method == "tools/call" ||
               method == "logging/setLevel" || subscription;
  if (!known) fail(error_code::kMethodNotFound, "method not found: " + method);
  if (!initialize_seen_)
    fail(error_code::kInvalidRequest,
         "the session is not initialized: send initialize first (or, for protocol revision "
         "2026-07-28, put io.modelcontextprotocol/protocolVersion in the request's _meta)");
  if (method == "logging/setLevel") {
    auto level = parse_log_level(required_string(object_params(message), "level", method));
    if (!level)
      fail(error_code::kInvalidParams,
           "unknown log level; use debug, info, notice, warning, error, critical, alert or "
           "emergency");
    log_level_->store(*level);
    return json::object();
  }
  if (subscription) return subscribe(object_params(message), method == "resources/subscribe");
  if (method == "tools/call") fail(error_code::kMethodNotFound, "method not found: " + method);
  return answer_feature_method(server_, message, session_context());
}

json Session::subscribe(const json& params, bool on) {
  const std::string method = on ? "resources/subscribe" : "resources/unsubscribe";
  std::string uri = required_string(params, "uri", method);
  if (on && !server_.resources().knows(uri))
    fail(error_code::kResourceNotFound,
         "Resource not found: " + uri +
             "; resources/list and resources/templates/list name the "
             "resources kiln has",
         json{{"uri", uri}});
  std::lock_guard lock(mutex_);
  if (on)
    subscribed_.insert(uri);
  else
    subscribed_.erase(uri);  // unsubscribing from what was never subscribed changes nothing
  return json::object();
}

void Session::resource_changed(const std::string& uri) {
  {
    std::lock_guard lock(mutex_);
    if (!subscribed_.count(uri)) return;
  }
  outbox_.notify(make_notification("notifications/resources/updated", {{"uri", uri}}), nullptr);
}

json Session::dispatch_stateless(const Message& message, const ProtocolContext& context) {
  if (message.method == "server/discover") return discover();
  // initialize, ping, logging/setLevel, resources/(un)subscribe are not part of this
  // revision; subscriptions/listen is, but kiln declares nothing that would change.
  if (is_task_method(message.method))
    return server_.tasks().answer(message.method, object_params(message), context);
  if (!is_feature_method(message.method))
    fail(error_code::kMethodNotFound,
         "method not found: " + message.method + " (protocol revision " + context.version + ")");
  return answer_feature_method(server_, message, context);
}

json Session::discover() const {
  json versions = json::array();
  for (auto v : stateless_protocol_versions()) versions.push_back(std::string(v));
  // The tasks extension exists only in this revision, so only discover declares it.
  json capabilities = server_capabilities();
  capabilities.update(tasks_capability());
  json result{{"supportedVersions", std::move(versions)},
              {"capabilities", std::move(capabilities)}};
  if (!server_.info().instructions.empty()) result["instructions"] = server_.info().instructions;
  return result;
}

json Session::initialize(const json& params) {
  // Checked before the session counts as initialized, so the client can send it again, fixed.
  // (json::value() would throw on a number here, out of the session and the transport.)
  auto requested = params.find("protocolVersion");
  if (requested != params.end() && !requested->is_string())
    fail(error_code::kInvalidParams,
         "initialize needs \"protocolVersion\" as a string, such as \"" +
             std::string(newest_protocol_version()) + "\"");
  if (initialize_seen_.exchange(true))
    fail(error_code::kInvalidRequest, "initialize was already called in this session");
  std::string client_version = requested != params.end() ? requested->get<std::string>() : "";
  std::string version = negotiate_protocol_version(client_version);
  {
    std::lock_guard lock(mutex_);
    protocol_version_ = version;
    auto capabilities = params.find("capabilities");
    if (capabilities != params.end() && capabilities->is_object())
      client_capabilities_ = *capabilities;
  }
  const ServerInfo& info = server_.info();
  json result{
      {"protocolVersion", version},
      {"capabilities", initialize_capabilities()},
      {"serverInfo", {{"name", info.name}, {"title", info.title}, {"version", info.version}}}};
  if (!info.instructions.empty()) result["instructions"] = info.instructions;
  spdlog::info("session initialized: client {} asked for {}, answered {}", client_name(params),
               client_version, version);
  return result;
}

void Session::start_tool_call(const Message& message, const ProtocolContext& context) {
  std::shared_ptr<InFlight> request;
  {
    std::lock_guard lock(mutex_);
    request = in_flight_[id_key(message.id)];
  }
  const json& params = object_params(message);
  std::string name = required_string(params, "name", "tools/call");
  const Tool* tool = server_.tools().find(name);
  if (!tool)
    fail(error_code::kInvalidParams,
         "unknown tool: " + name + "; call tools/list for the tools kiln offers");
  json missing =
      missing_client_capabilities(context.client_capabilities, tool->required_client_capabilities);
  if (!missing.empty())
    fail(error_code::kMissingRequiredClientCapability,
         "tool " + name + " needs client capabilities the client did not declare: " +
             missing.dump() + "; declare them, or use another tool",
         json{{"requiredCapabilities", missing}});
  json arguments = params.value("arguments", json::object());
  if (start_task(message, *tool, context)) return;
  json id = message.id;
  json token = progress_token(params);
  // The initialize era keeps one level per session (logging/setLevel); a stateless
  // request brings its own, and without one gets no log notifications.
  std::shared_ptr<std::atomic<LogLevel>> level = log_level_;
  if (context.stateless)
    level =
        context.log_level ? std::make_shared<std::atomic<LogLevel>>(*context.log_level) : nullptr;
  ClientInput input = read_client_input(params, context, server_.request_state_seal());
  workers_.start([this, id, name, arguments, token, request, level, context, input] {
    CallContext call([this, id](json note) { outbox_.notify(note, id); }, token, request->cancelled,
                     level);
    call.set_input(input);
    call.allow_background();
    call.set_resource_changed(
        [this](const std::string& uri) { server_.resources().changes().changed(uri); });
    // The 2025 revisions ask the client with requests of kiln's own, sent like the call's
    // notifications (over HTTP on its response stream); 2026-07-28 asks through results.
    if (!context.stateless)
      call.set_asker(
          [this, id, request, capabilities = context.client_capabilities](const json& requests) {
            return client_requests_.ask(
                requests, capabilities, [this, id](const json& sent) { outbox_.notify(sent, id); },
                *request->cancelled);
          });
    ToolResult outcome;
    {
      const CallContext::Heartbeat heartbeat(call, kHeartbeatInterval);
      outcome = server_.tools().run(name, arguments, call);
    }
    json result = outcome.input_required && input.can_ask
                      ? input_required_result(*outcome.input_required, server_.request_state_seal())
                      : call_result(outcome.input_required
                                        ? ToolResult::error("tool " + name +
                                                            " needs input from the client, which "
                                                            "protocol revision 2026-07-28 carries; "
                                                            "call it with that revision")
                                        : outcome);
    result = shape_result(context, "tools/call", std::move(result), server_.info());
    // A cancelled call ends without a response; answer() ignores it when the
    // cancellation already ended it, and ends it here when shutdown cancelled it.
    answer(id, request->cancelled->load()
                   ? std::nullopt
                   : std::optional<json>(make_result(id, std::move(result))));
  });
}

bool Session::start_task(const Message& message, const Tool& tool, const ProtocolContext& context) {
  const bool negotiated = context.stateless && declares_tasks(context.client_capabilities);
  if (tool.task_support == TaskSupport::kRequired && !negotiated)
    fail(error_code::kMissingRequiredClientCapability,
         "tool " + tool.name + " runs only as a task of the " + std::string(kTasksExtension) +
             " extension: declare it under extensions in the request's clientCapabilities "
             "(protocol revision 2026-07-28)",
         json{{"requiredCapabilities", tasks_capability()}});
  const json& params = object_params(message);
  // A legacy `task` param changes nothing: the tool's taskSupport decides.
  if (!negotiated || tool.task_support == TaskSupport::kForbidden ||
      (tool.gathers_input_first && !params.contains("inputResponses")))
    return false;
  ClientInput input = read_client_input(params, context, server_.request_state_seal());
  json arguments = params.value("arguments", json::object());
  const Server& server = server_;  // outlives the job: its JobStore joins every job first
  auto created = server_.tasks().create(
      tool.name, [&server, name = tool.name, arguments, input](CallContext& job) {
        job.set_input(input);
        return server.tools().run(name, arguments, job);
      });
  json result =
      created ? *created
              : call_result(ToolResult::error(ErrorCode::kUnavailable, created.error().message,
                                              "wait for a task to end, then call again"));
  answer(message.id, make_result(message.id, shape_result(context, "tools/call", std::move(result),
                                                          server_.info())));
  return true;
}

}  // namespace kiln::mcp
