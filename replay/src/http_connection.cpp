#include "kiln/replay/http_connection.h"

#include <httplib.h>

#include <atomic>

#include "kiln/base/json_text.h"
#include "kiln/base/text.h"
#include "kiln/mcp/protocol_context.h"
#include "kiln/mcp/protocol_version.h"

namespace kiln::replay {

using json = nlohmann::json;

namespace {

constexpr const char* kSessionHeader = "Mcp-Session-Id";
constexpr const char* kVersionHeader = "MCP-Protocol-Version";

const json& first_message(const json& message) {
  return message.is_array() && !message.empty() ? message.front() : message;
}

// The stateless revision a message belongs to, or "" for the 2025 era.
std::string stateless_version(const json& message) {
  const json& m = first_message(message);
  if (!m.is_object()) return "";
  if (m.contains("params") && m["params"].is_object() && m["params"].contains("_meta") &&
      m["params"]["_meta"].is_object()) {
    const json& meta = m["params"]["_meta"];
    if (meta.contains(mcp::meta_key::kProtocolVersion) &&
        meta[mcp::meta_key::kProtocolVersion].is_string())
      return meta[mcp::meta_key::kProtocolVersion].get<std::string>();
  }
  if (m.value("method", "") == "server/discover")
    return std::string(mcp::stateless_protocol_versions().front());
  return "";
}

std::string base64(std::string_view bytes) {
  static constexpr char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t chunk = static_cast<uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) chunk |= static_cast<uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) chunk |= static_cast<uint8_t>(bytes[i + 2]);
    out += kDigits[(chunk >> 18) & 63];
    out += kDigits[(chunk >> 12) & 63];
    out += i + 1 < bytes.size() ? kDigits[(chunk >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[chunk & 63] : '=';
  }
  return out;
}

// A header value as the 2026 revision carries it: as is when it is plain printable ASCII,
// else =?base64?...?=.
std::string header_value(const std::string& value) {
  bool plain = !value.empty() && value.front() != ' ' && value.back() != ' ';
  for (unsigned char c : value) plain = plain && c >= 0x20 && c < 0x7f;
  return plain ? value : "=?base64?" + base64(value) + "?=";
}

// Mcp-Name: the tool or prompt name, or the resource URI, for the methods that have one.
std::string name_header(const json& m) {
  const std::string method = m.value("method", "");
  if (!m.contains("params") || !m["params"].is_object()) return "";
  const json& params = m["params"];
  const char* key = method == "tools/call" || method == "prompts/get" ? "name"
                    : method == "resources/read"                      ? "uri"
                                                                      : nullptr;
  if (!key || !params.contains(key) || !params[key].is_string()) return "";
  return params[key].get<std::string>();
}

}  // namespace

Result<HttpEndpoint> parse_http_url(const std::string& url) {
  if (url.rfind("https://", 0) == 0)
    return make_error("--url " + url +
                      ": kiln replay speaks plain http; reach an https server through a tunnel "
                      "(ssh -L 8765:127.0.0.1:8765 host) and pass http://127.0.0.1:8765/mcp");
  if (url.rfind("http://", 0) != 0)
    return make_error("--url " + url +
                      " is not an http:// URL; pass e.g. http://127.0.0.1:8765/mcp");
  const size_t slash = url.find('/', 7);
  HttpEndpoint endpoint;
  endpoint.scheme_host_port = url.substr(0, slash);
  endpoint.path = slash == std::string::npos ? "/mcp" : url.substr(slash);
  if (endpoint.scheme_host_port.size() <= 7)
    return make_error("--url " + url + " names no host; pass e.g. http://127.0.0.1:8765/mcp");
  return endpoint;
}

// One POST in flight: what was sent and what has come back so far.
struct HttpConnection::Post {
  std::string body;
  json id;  // the request's id, for an error made from an HTTP failure
  httplib::Headers headers;
  bool initialize = false;
  int status = 0;
  std::string content_type;
  std::string received;  // the body so far (an event stream: what is not yet a whole event)
  std::mutex mutex;      // client, while the POST runs
  httplib::Client* client = nullptr;
  std::atomic<bool> done{false};
};

HttpConnection::HttpConnection(HttpEndpoint endpoint, std::chrono::seconds timeout)
    : endpoint_(std::move(endpoint)), timeout_(timeout) {}

HttpConnection::~HttpConnection() { finish(); }

Status HttpConnection::send(const json& message) {
  start(json_text(message), message);
  return Ok{};
}

Status HttpConnection::send_raw(const std::string& text) {
  start(text, json());
  return Ok{};
}

void HttpConnection::start(std::string body, const json& message) {
  auto post = std::make_shared<Post>();
  post->body = std::move(body);
  const json& first = first_message(message);
  if (first.is_object() && first.contains("id")) post->id = first["id"];
  post->headers = {{"Accept", "application/json, text/event-stream"}};
  const std::string stateless = stateless_version(message);
  std::lock_guard lock(mutex_);
  if (!stateless.empty()) {
    post->headers.emplace(kVersionHeader, stateless);
    if (first.is_object() && first["method"].is_string())
      post->headers.emplace("Mcp-Method", first["method"].get<std::string>());
    if (std::string name = name_header(first); !name.empty())
      post->headers.emplace("Mcp-Name", header_value(name));
  } else {
    post->initialize = first.is_object() && first.value("method", "") == "initialize";
    if (!session_id_.empty() && !post->initialize) {
      post->headers.emplace(kSessionHeader, session_id_);
      post->headers.emplace(kVersionHeader, session_version_);
    }
  }
  posts_.push_back({post, std::thread([this, post] {
                      run(post);
                      post->done = true;
                    })});
}

// The answer to initialize names the session's revision, for the MCP-Protocol-Version of every
// later POST (it reaches the inbox only after this, so the next message finds it).
void HttpConnection::take(const Post& post, json message) {
  if (post.initialize && message.is_object() && message.contains("result") &&
      message["result"].is_object() && message["result"]["protocolVersion"].is_string()) {
    std::lock_guard lock(mutex_);
    session_version_ = message["result"]["protocolVersion"].get<std::string>();
  }
  inbox_.push(std::move(message));
}

void HttpConnection::run(const std::shared_ptr<Post>& post) {
  httplib::Client client(endpoint_.scheme_host_port);
  {
    std::lock_guard lock(post->mutex);
    post->client = &client;
  }
  struct Forget {
    Post& post;
    ~Forget() {
      std::lock_guard lock(post.mutex);
      post.client = nullptr;
    }
  } forget{*post};
  client.set_connection_timeout(10);
  client.set_read_timeout(timeout_.count());
  client.set_write_timeout(60);
  httplib::Request request;
  request.method = "POST";
  request.path = endpoint_.path;
  request.headers = post->headers;
  request.set_header("Content-Type", "application/json");
  request.body = post->body;
  auto deliver_events = [this, post](bool final) {
    for (;;) {
      size_t end = post->received.find("\n\n");
      size_t skip = 2;
      if (size_t crlf = post->received.find("\r\n\r\n"); crlf < end) end = crlf, skip = 4;
      if (end == std::string::npos && !final) return;
      std::string event = post->received.substr(0, end);
      post->received.erase(0, end == std::string::npos ? std::string::npos : end + skip);
      std::string data;
      size_t start = 0;
      while (start < event.size()) {
        size_t stop = event.find('\n', start);
        std::string_view line = std::string_view(event).substr(start, stop - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.rfind("data:", 0) == 0) {
          line.remove_prefix(line.size() > 5 && line[5] == ' ' ? 6 : 5);
          if (!data.empty()) data += "\n";
          data += line;
        }
        if (stop == std::string::npos) break;
        start = stop + 1;
      }
      if (!trim(data).empty()) {
        auto parsed = parse_json_bounded(data);
        take(*post, parsed ? std::move(*parsed) : json(data));
      }
      if (end == std::string::npos) return;
    }
  };
  request.response_handler = [this, post](const httplib::Response& response) {
    post->status = response.status;
    post->content_type = response.get_header_value("Content-Type");
    if (post->initialize && response.has_header(kSessionHeader)) {
      std::lock_guard lock(mutex_);
      session_id_ = response.get_header_value(kSessionHeader);
    }
    return true;
  };
  request.content_receiver = [post, &deliver_events](const char* data, size_t size, uint64_t,
                                                     uint64_t) {
    post->received.append(data, size);
    if (post->content_type.find("text/event-stream") != std::string::npos) deliver_events(false);
    return true;
  };
  httplib::Response response;
  httplib::Error error = httplib::Error::Success;
  auto fail = [&](const std::string& what) {
    inbox_.push(json{{"jsonrpc", "2.0"},
                     {"id", post->id},
                     {"error", {{"code", -32000}, {"message", what}, {"data", "kiln replay"}}}});
  };
  if (!client.send(request, response, error)) {
    fail("cannot POST to " + endpoint_.scheme_host_port + endpoint_.path + ": " +
         httplib::to_string(error));
    return;
  }
  if (post->content_type.find("text/event-stream") != std::string::npos) {
    deliver_events(true);
    return;
  }
  const std::string_view body = trim(post->received);
  if (body.empty()) {
    if (post->status >= 400) fail("HTTP " + std::to_string(post->status) + " with no body");
    return;
  }
  auto parsed = parse_json_bounded(body);
  if (!parsed) {
    fail("HTTP " + std::to_string(post->status) + ": " + std::string(utf8_prefix(body, 300)));
    return;
  }
  take(*post, std::move(*parsed));
}

std::optional<json> HttpConnection::receive(Clock::time_point deadline) {
  return inbox_.pop(deadline);
}

// A POST still open after a short grace (the stream of a cancelled call, which gets no answer)
// is cut, so that the end of a replay never waits for the read timeout.
void HttpConnection::finish() {
  std::vector<std::pair<std::shared_ptr<Post>, std::thread>> posts;
  std::string session;
  {
    std::lock_guard lock(mutex_);
    posts.swap(posts_);
    session = std::exchange(session_id_, "");
  }
  const auto grace = Clock::now() + std::chrono::seconds(2);
  for (auto& [post, thread] : posts) {
    while (!post->done && Clock::now() < grace)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!post->done) {
      std::lock_guard lock(post->mutex);
      if (post->client) post->client->stop();
    }
    if (thread.joinable()) thread.join();
  }
  if (!session.empty()) {
    httplib::Client client(endpoint_.scheme_host_port);
    client.set_connection_timeout(5);
    client.Delete(endpoint_.path, {{kSessionHeader, session}});
  }
  inbox_.close("the replay ended the HTTP session");
}

}  // namespace kiln::replay
