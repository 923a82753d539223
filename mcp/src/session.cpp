#include "kiln/mcp/session.h"

#include <spdlog/spdlog.h>

#include "kiln/mcp/protocol_version.h"

namespace kiln::mcp {
namespace {

// A JSON-RPC error raised while dispatching; it never leaves this file.
struct RpcFailure {
  RpcError error;
};

[[noreturn]] void fail(int code, std::string message) {
  throw RpcFailure{RpcError{code, std::move(message), nullptr}};
}

const json& object_params(const Message& message) {
  static const json kEmpty = json::object();
  if (message.params.is_null()) return kEmpty;
  if (!message.params.is_object())
    fail(error_code::kInvalidParams, "params of " + message.method + " must be an object");
  return message.params;
}

std::string required_string(const json& params, const char* field, const std::string& method) {
  auto it = params.find(field);
  if (it == params.end() || !it->is_string())
    fail(error_code::kInvalidParams, std::string(method) + " needs a string \"" + field + "\"");
  return it->get<std::string>();
}

// clientInfo.name for the log, "?" when it is absent or not a string.
std::string client_name(const json& params) {
  auto info = params.find("clientInfo");
  if (info == params.end() || !info->is_object()) return "?";
  auto name = info->find("name");
  return name != info->end() && name->is_string() ? name->get<std::string>() : "?";
}

json progress_token(const json& params) {
  auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return nullptr;
  auto token = meta->find("progressToken");
  if (token == meta->end() || !(token->is_string() || token->is_number_integer())) return nullptr;
  return *token;
}

}  // namespace

Session::Session(const Server& server, Outbox& outbox) : server_(server), outbox_(outbox) {}

Session::~Session() { shutdown(); }

std::string Session::protocol_version() const {
  std::lock_guard lock(mutex_);
  return protocol_version_;
}

void Session::shutdown() {
  {
    std::lock_guard lock(mutex_);
    for (auto& [key, request] : in_flight_) request->cancelled->store(true);
  }
  reap_workers(/*wait_all=*/true);
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
  }
  // Responses: kiln sends no requests to clients yet, so there is nothing to match.
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
  if (message.method == "tools/call" && initialize_seen_) {
    start_tool_call(message);
    return;
  }
  try {
    answer(message.id, make_result(message.id, dispatch(message)));
  } catch (const RpcFailure& failure) {
    answer(message.id, make_error_response(message.id, failure.error));
  }
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

json Session::dispatch(const Message& message) {
  const std::string& method = message.method;
  if (method == "initialize") return initialize(object_params(message));
  if (method == "ping") return json::object();

  static const char* kKnown[] = {"tools/list",
                                 "tools/call",
                                 "resources/list",
                                 "resources/read",
                                 "resources/templates/list",
                                 "prompts/list",
                                 "prompts/get",
                                 "logging/setLevel"};
  bool known = false;
  for (const char* m : kKnown) known = known || method == m;
  if (!known) fail(error_code::kMethodNotFound, "method not found: " + method);
  if (!initialize_seen_)
    fail(error_code::kInvalidRequest, "the session is not initialized: send initialize first");

  const json& params = object_params(message);
  if (method == "tools/list") return server_.tools().list();
  if (method == "resources/list") return server_.resources().list();
  if (method == "resources/templates/list") return server_.resources().list_templates();
  if (method == "resources/read") {
    std::string uri = required_string(params, "uri", method);
    auto contents = server_.resources().read(uri);
    if (!contents) {
      if (!server_.resources().knows(uri)) {
        throw RpcFailure{
            RpcError{error_code::kResourceNotFound, contents.error().message, json{{"uri", uri}}}};
      }
      fail(error_code::kInternalError, contents.error().message);
    }
    return *contents;
  }
  if (method == "prompts/list") return server_.prompts().list();
  if (method == "prompts/get") {
    std::string name = required_string(params, "name", method);
    auto prompt = server_.prompts().get(name, params.value("arguments", json::object()));
    if (!prompt) fail(error_code::kInvalidParams, prompt.error().message);
    return *prompt;
  }
  if (method == "logging/setLevel") {
    auto level = parse_log_level(required_string(params, "level", method));
    if (!level)
      fail(error_code::kInvalidParams,
           "unknown log level; use debug, info, notice, warning, error, critical, alert or "
           "emergency");
    log_level_->store(*level);
    return json::object();
  }
  fail(error_code::kMethodNotFound, "method not found: " + method);  // tools/call before initialize
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
  }
  const ServerInfo& info = server_.info();
  json result{
      {"protocolVersion", version},
      {"capabilities",
       {{"tools", {{"listChanged", false}}},
        {"resources", {{"subscribe", false}, {"listChanged", false}}},
        {"prompts", {{"listChanged", false}}},
        {"logging", json::object()}}},
      {"serverInfo", {{"name", info.name}, {"title", info.title}, {"version", info.version}}}};
  if (!info.instructions.empty()) result["instructions"] = info.instructions;
  spdlog::info("session initialized: client {} asked for {}, answered {}", client_name(params),
               client_version, version);
  return result;
}

void Session::start_tool_call(const Message& message) {
  std::shared_ptr<InFlight> request;
  {
    std::lock_guard lock(mutex_);
    request = in_flight_[id_key(message.id)];
  }
  json params = message.params.is_object() ? message.params : json::object();
  if (!params.contains("name") || !params["name"].is_string()) {
    answer(message.id, make_error_response(
                           message.id, RpcError{error_code::kInvalidParams,
                                                "tools/call needs a string \"name\"", nullptr}));
    return;
  }
  std::string name = params["name"].get<std::string>();
  if (!server_.tools().contains(name)) {
    answer(message.id, make_error_response(
                           message.id, RpcError{error_code::kInvalidParams,
                                                "unknown tool: " + name +
                                                    "; call tools/list for the tools kiln offers",
                                                nullptr}));
    return;
  }
  json arguments = params.value("arguments", json::object());
  json id = message.id;
  json token = progress_token(params);
  auto done = std::make_shared<std::atomic<bool>>(false);

  reap_workers(/*wait_all=*/false);
  std::thread thread([this, id, name, arguments, token, request, done] {
    CallContext context([this, id](json note) { outbox_.notify(note, id); }, token,
                        request->cancelled, log_level_);
    json result = server_.tools().call(name, arguments, context);
    // A cancelled call ends without a response; answer() ignores it when the
    // cancellation already ended it, and ends it here when shutdown cancelled it.
    answer(id, request->cancelled->load()
                   ? std::nullopt
                   : std::optional<json>(make_result(id, std::move(result))));
    done->store(true);
  });
  std::lock_guard lock(mutex_);
  workers_.push_back(Worker{std::move(thread), done});
}

void Session::reap_workers(bool wait_all) {
  std::vector<Worker> finished;
  {
    std::lock_guard lock(mutex_);
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (wait_all || it->done->load()) {
        finished.push_back(std::move(*it));
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& worker : finished)
    if (worker.thread.joinable()) worker.thread.join();
}

}  // namespace kiln::mcp
