// A running server spoken to over Streamable HTTP (`kiln mcp --http`): each message is a POST
// to the endpoint, answered as JSON or as an event stream read as it arrives (so a request the
// server sends during a call can be answered before the call ends). Each message picks its era:
//  - 2025 revisions: `initialize` opens a session; its Mcp-Session-Id and the negotiated
//    revision (MCP-Protocol-Version) go on every later POST; finish() DELETEs the session.
//  - 2026-07-28: `server/discover` or a request whose params._meta names the revision is
//    stateless: no session id; MCP-Protocol-Version, Mcp-Method and Mcp-Name mirror the body.
// An HTTP failure without a JSON-RPC body (a refused connection, a 404 page) arrives as an
// error response to the request it was for, so the replay shows it as a difference at once.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kiln/replay/connection.h"

namespace kiln::replay {

struct HttpEndpoint {
  std::string scheme_host_port;  // "http://127.0.0.1:8765"
  std::string path;              // "/mcp"
};

// "http://HOST:PORT/PATH" (the path defaults to /mcp); https is refused with what to do.
Result<HttpEndpoint> parse_http_url(const std::string& url);

class HttpConnection : public Connection {
 public:
  explicit HttpConnection(HttpEndpoint endpoint, std::chrono::seconds timeout);
  ~HttpConnection() override;
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  Status send(const nlohmann::json& message) override;
  Status send_raw(const std::string& text) override;
  std::optional<nlohmann::json> receive(Clock::time_point deadline) override;
  std::string closed() override { return inbox_.closed(); }
  void finish() override;

 private:
  struct Post;
  void start(std::string body, const nlohmann::json& message);
  void run(const std::shared_ptr<Post>& post);
  void take(const Post& post, nlohmann::json message);

  HttpEndpoint endpoint_;
  std::chrono::seconds timeout_;
  Inbox inbox_;
  std::mutex mutex_;  // the session and the threads
  std::string session_id_;
  std::string session_version_;
  std::vector<std::pair<std::shared_ptr<Post>, std::thread>> posts_;
};

}  // namespace kiln::replay
