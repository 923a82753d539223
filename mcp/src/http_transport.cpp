#include "kiln/mcp/http_transport.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <mutex>
#include <random>

#include "kiln/base/json_text.h"
#include "kiln/http/listener.h"
#include "kiln/mcp/http_exchange.h"
#include "kiln/mcp/json_rpc.h"
#include "kiln/mcp/protocol_version.h"
#include "kiln/mcp/session.h"
#include "kiln/mcp/stateless_http.h"

namespace kiln::mcp {
namespace {

constexpr const char* kSessionHeader = "Mcp-Session-Id";
constexpr const char* kVersionHeader = "MCP-Protocol-Version";

using http::request_header;

std::string new_session_id() {
  std::random_device device;
  std::uniform_int_distribution<unsigned> byte(0, 255);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (int i = 0; i < 16; ++i) {
    unsigned b = byte(device);
    id.push_back(kHex[b >> 4]);
    id.push_back(kHex[b & 15]);
  }
  return id;
}

void reply_error(httplib::Response& response, int status, const std::string& message,
                 int code = error_code::kInvalidRequest) {
  response.status = status;
  response.set_content(json_text(make_error_response(nullptr, RpcError{code, message, nullptr})),
                       "application/json");
}

// Compares rather than reads "method": value("method", "") throws when it is not a string.
bool is_initialize(const json& body) {
  return body.is_object() && body.contains("id") && body.contains("method") &&
         body["method"] == "initialize";
}

// A POST of the stateless revision: a request with no session, from a client that
// did not name an initialize-era revision in MCP-Protocol-Version.
bool is_stateless_post(const httplib::Request& request, const json& body) {
  if (request.has_header(kSessionHeader) || !body.is_object()) return false;
  if (!body.contains("id") || !body.contains("method")) return false;
  // Even an initialize that carries the stateless _meta is of that era (and unknown to it).
  const bool stateless_meta = body.contains("params") && body["params"].is_object() &&
                              body["params"].contains("_meta") &&
                              body["params"]["_meta"].is_object() &&
                              body["params"]["_meta"].contains(meta_key::kProtocolVersion);
  if (is_initialize(body) && !stateless_meta) return false;
  auto version = request_header(request, kVersionHeader);
  return !version || !is_supported_protocol_version(*version);
}

}  // namespace

// One HTTP session: an MCP Session and the outbox that routes its messages to
// the POST exchanges waiting for them.
class HttpSession : public Outbox {
 public:
  HttpSession(const Server& server, std::string id, Recorder* recorder)
      : id_(std::move(id)), recorder_(recorder), session_(server, *this) {}
  ~HttpSession() override { session_.shutdown(); }

  const std::string& id() const { return id_; }
  Session& session() { return session_; }
  std::chrono::steady_clock::time_point last_used() const {
    std::lock_guard lock(mutex_);
    return last_used_;
  }

  // Feeds one POST body to the session with `exchange` collecting the replies.
  // False, with nothing delivered, when a request id is already in flight.
  bool deliver(const json& body, const std::shared_ptr<Exchange>& exchange) {
    std::lock_guard handling(handle_mutex_);
    {
      std::lock_guard lock(mutex_);
      for (const auto& key : exchange->pending_keys()) {
        auto it = routes_.find(key);
        if (it != routes_.end() && !it->second.expired()) return false;
      }
      last_used_ = std::chrono::steady_clock::now();
      for (const auto& key : exchange->pending_keys()) routes_[key] = exchange;
      current_ = exchange;
    }
    if (recorder_) recorder_->incoming(body, id_);
    session_.handle(body);
    std::lock_guard lock(mutex_);
    current_.reset();
    return true;
  }

  // A notification of a request goes out on that request's stream; one of the session's own
  // (`about` null: notifications/resources/updated) on whichever response stream is open,
  // since kiln opens no standalone GET stream (it is dropped when none is open).
  void notify(const json& message, const json& about) override {
    auto exchange = about.is_null() ? any_open()
                                    : route(about, /*finished=*/false,
                                            /*fallback=*/false);
    if (exchange) {
      if (recorder_) recorder_->outgoing(message, id_);
      exchange->push_notification(message);
    } else {
      spdlog::debug("session {}: dropped a notification with no open stream", id_);
    }
  }

  void respond(const json& id, std::optional<json> response) override {
    auto exchange = route(id, /*finished=*/true, /*fallback=*/true);
    if (!exchange) return;
    if (response && recorder_) recorder_->outgoing(*response, id_);
    exchange->finish(id.is_null() ? std::string() : id_key(id), std::move(response));
  }

 private:
  // The exchange waiting for request `id`. With `fallback`, a reply for an id no
  // exchange waits for (a message rejected before it became a request) goes to
  // the POST being delivered; notifications never do, so late progress of a
  // cancelled call cannot leak into an unrelated reply.
  std::shared_ptr<Exchange> route(const json& id, bool finished, bool fallback) {
    std::lock_guard lock(mutex_);
    if (!id.is_null()) {
      auto it = routes_.find(id_key(id));
      if (it != routes_.end()) {
        auto exchange = it->second.lock();
        if (finished) routes_.erase(it);
        if (exchange) return exchange;
      }
    }
    return fallback ? current_ : nullptr;
  }

  std::shared_ptr<Exchange> any_open() {
    std::lock_guard lock(mutex_);
    for (const auto& [key, route] : routes_)
      if (auto exchange = route.lock()) return exchange;
    return nullptr;
  }

  std::string id_;
  Recorder* recorder_;
  mutable std::mutex mutex_;  // guards routes_, current_, last_used_
  std::mutex handle_mutex_;   // one POST body is fed to the session at a time
  std::map<std::string, std::weak_ptr<Exchange>> routes_;
  std::shared_ptr<Exchange> current_;
  std::chrono::steady_clock::time_point last_used_ = std::chrono::steady_clock::now();
  Session session_;  // last: destroyed first, while the routes above still exist
};

class HttpTransport::Impl {
 public:
  Impl(const Server& server, HttpOptions options)
      : server_(server), options_(std::move(options)), listener_(listener_options(options_)) {
    httplib::Server& routes = listener_.server();
    routes.Post("/mcp", [this](const httplib::Request& q, httplib::Response& r) { post(q, r); });
    routes.Delete("/mcp",
                  [this](const httplib::Request& q, httplib::Response& r) { remove(q, r); });
    routes.Get("/mcp", [this](const httplib::Request& q, httplib::Response& r) {
      if (!guard(q, r)) return;
      r.status = 405;
      r.set_header("Allow", "POST, DELETE");
      r.set_content("kiln opens no standalone SSE stream; POST requests to /mcp", "text/plain");
    });
    routes.set_error_handler([](const httplib::Request& q, httplib::Response& r) {
      if (r.status == 404 && q.path != "/mcp")
        r.set_content("not found: kiln serves MCP at /mcp", "text/plain");
      if (r.status == 413) r.set_content("request too large", "text/plain");
    });
    routes.set_exception_handler(
        [](const httplib::Request&, httplib::Response& r, std::exception_ptr error) {
          std::string what = http::exception_text(error);
          spdlog::error("HTTP handler failed: {}", what);
          reply_error(r, 500, "internal error: " + what, error_code::kInternalError);
        });
  }

  Result<int> bind() { return listener_.bind(); }
  void serve() { listener_.serve(); }
  void stop() { listener_.stop(); }

 private:
  static http::ListenerOptions listener_options(const HttpOptions& options) {
    http::ListenerOptions listener;
    listener.host = options.host;
    listener.port = options.port;
    listener.guard = options.guard;
    listener.address_flag = "--http HOST:PORT";
    listener.token_advice = "pass --token-file FILE, or bind 127.0.0.1";
    listener.max_request_bytes = options.max_request_bytes;
    listener.threads = 64;
    return listener;
  }

  bool guard(const httplib::Request& request, httplib::Response& response) {
    auto verdict = listener_.guard(request, response);
    if (verdict.status == 0) return true;
    reply_error(response, verdict.status, verdict.message);
    return false;
  }

  std::shared_ptr<HttpSession> find_session(const httplib::Request& request,
                                            httplib::Response& response) {
    auto id = request_header(request, kSessionHeader);
    if (!id) {
      reply_error(
          response, 400,
          "missing Mcp-Session-Id header: send initialize first and echo the id it returns");
      return nullptr;
    }
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(*id);
    if (it == sessions_.end()) {
      reply_error(response, 404, "unknown or ended session " + *id + ": initialize a new session");
      return nullptr;
    }
    return it->second;
  }

  std::shared_ptr<HttpSession> create_session() {
    std::lock_guard lock(mutex_);
    while (sessions_.size() >= options_.max_sessions) {
      auto oldest = sessions_.begin();
      for (auto it = sessions_.begin(); it != sessions_.end(); ++it)
        if (it->second->last_used() < oldest->second->last_used()) oldest = it;
      spdlog::info("ending idle session {} (session limit {})", oldest->first,
                   options_.max_sessions);
      sessions_.erase(oldest);
    }
    auto session = std::make_shared<HttpSession>(server_, new_session_id(), options_.recorder);
    sessions_[session->id()] = session;
    return session;
  }

  void post(const httplib::Request& request, httplib::Response& response) {
    if (!guard(request, response)) return;
    auto parsed = parse_json_text(request.body);
    if (auto* rejected = std::get_if<RejectedMessage>(&parsed)) {
      if (options_.recorder)
        options_.recorder->incoming_raw(request.body,
                                        request_header(request, kSessionHeader).value_or(""));
      response.status = 400;
      response.set_content(json_text(make_error_response(rejected->id, rejected->error)),
                           "application/json");
      return;
    }
    const json& body = std::get<json>(parsed);
    if (is_stateless_post(request, body)) {
      post_stateless(request, response, body);
      return;
    }

    std::shared_ptr<HttpSession> session;
    if (!request.has_header(kSessionHeader) && is_initialize(body)) {
      session = create_session();
    } else {
      session = find_session(request, response);
      if (!session) return;
      if (auto version = request_header(request, kVersionHeader)) {
        std::string negotiated = session->session().protocol_version();
        if (!is_supported_protocol_version(*version) ||
            (!negotiated.empty() && *version != negotiated)) {
          reply_error(
              response, 400,
              "unsupported MCP-Protocol-Version " + *version + "; this session speaks " +
                  (negotiated.empty() ? std::string(newest_protocol_version()) : negotiated));
          return;
        }
      }
    }
    response.set_header(kSessionHeader, session->id());

    if (body.is_array() && !protocol_allows_batches(session->session().protocol_version())) {
      reply_error(response, 400,
                  "JSON-RPC batches are not part of protocol revision " +
                      session->session().protocol_version() + "; send each message on its own");
      return;
    }
    auto exchange = std::make_shared<Exchange>(body, sse_allowed(request));
    if (!session->deliver(body, exchange)) {
      reply_error(response, 400,
                  "a request id in this message is already in use by a request in flight");
      return;
    }

    if (is_initialize(body) && !session->session().initialized() &&
        session->session().protocol_version().empty()) {
      std::lock_guard lock(mutex_);  // initialize failed: keep no half-made session
      sessions_.erase(session->id());
    }
    answer(exchange, response);
  }

  // A stateless request: checked against its headers, then answered by a session of
  // its own that lives as long as its reply (the SSE stream, when there is one);
  // closing that stream cancels the request, as the revision says.
  void post_stateless(const httplib::Request& request, httplib::Response& response,
                      const json& body) {
    auto parsed = parse_message(body);
    if (auto* rejected = std::get_if<RejectedMessage>(&parsed)) {
      if (options_.recorder) options_.recorder->incoming(body);
      response.status = 400;
      response.set_content(json_text(make_error_response(rejected->id, rejected->error)),
                           "application/json");
      return;
    }
    const Message& message = std::get<Message>(parsed);
    try {
      check_stateless_post(message,
                           [&request](const char* name) { return request_header(request, name); });
    } catch (const RpcFailure& failure) {
      json reply = make_error_response(message.id, failure.error);
      if (options_.recorder) {
        options_.recorder->incoming(body);
        options_.recorder->outgoing(reply);
      }
      response.status = 400;
      response.set_content(json_text(reply), "application/json");
      return;
    }
    auto session = std::make_shared<HttpSession>(server_, "", options_.recorder);
    auto exchange = std::make_shared<Exchange>(body, sse_allowed(request));
    session->deliver(body, exchange);
    answer(exchange, response, session);
  }

  static bool sse_allowed(const httplib::Request& request) {
    std::string accept = request.get_header_value("Accept");
    return accept.empty() || accept.find("text/event-stream") != std::string::npos ||
           accept.find("*/*") != std::string::npos;
  }

  // `stateless` keeps that request's session alive until its reply is sent, and
  // gives its errors the HTTP status the stateless revision assigns them.
  static void answer(const std::shared_ptr<Exchange>& exchange, httplib::Response& response,
                     std::shared_ptr<HttpSession> stateless = nullptr) {
    Exchange::FirstEvent first = exchange->wait_first();
    if (first == Exchange::FirstEvent::kNothing) {
      response.status = 202;
      return;
    }
    if (first == Exchange::FirstEvent::kAllResponses) {
      json body = exchange->json_body();
      response.status = exchange->has_requests() ? 200 : 400;  // only rejections of a bad message
      if (stateless && body.is_object() && body.contains("error") && body["error"].is_object()) {
        const json& error = body["error"];
        response.status = stateless_http_status(
            RpcError{error.value("code", error_code::kInternalError), "", nullptr});
      }
      response.set_content(json_text(body), "application/json");
      return;
    }
    response.status = 200;
    response.set_header("Cache-Control", "no-cache");
    response.set_header("X-Accel-Buffering", "no");
    response.set_chunked_content_provider(
        "text/event-stream", [exchange, stateless](size_t, httplib::DataSink& sink) {
          json event;
          while (exchange->next_event(event)) {
            std::string frame = "event: message\ndata: " + json_text(event) + "\n\n";
            if (!sink.write(frame.data(), frame.size())) return false;
          }
          sink.done();
          return true;
        });
  }

  void remove(const httplib::Request& request, httplib::Response& response) {
    if (!guard(request, response)) return;
    auto session = find_session(request, response);
    if (!session) return;
    {
      std::lock_guard lock(mutex_);
      sessions_.erase(session->id());
    }
    spdlog::info("session {} ended by the client", session->id());
    response.status = 200;
  }

  const Server& server_;
  HttpOptions options_;
  std::mutex mutex_;  // guards sessions_
  std::map<std::string, std::shared_ptr<HttpSession>> sessions_;
  http::Listener listener_;  // last: destroyed first, so no handler outlives the sessions
};

HttpTransport::HttpTransport(const Server& server, HttpOptions options)
    : impl_(std::make_unique<Impl>(server, std::move(options))) {}
HttpTransport::~HttpTransport() = default;
Result<int> HttpTransport::bind() { return impl_->bind(); }
void HttpTransport::serve() { impl_->serve(); }
void HttpTransport::stop() { impl_->stop(); }

}  // namespace kiln::mcp
