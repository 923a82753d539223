// MCP over Streamable HTTP on one endpoint, /mcp (cpp-httplib).
//   POST    a message or batch; answered with JSON, or with an SSE stream when
//           progress or log notifications are sent during the call; 202 when
//           it carried only notifications or responses.
//   DELETE  ends the session named by Mcp-Session-Id.
//   GET     405: kiln opens no standalone server-to-client stream.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/http/request_guard.h"
#include "kiln/mcp/recorder.h"
#include "kiln/mcp/server.h"

namespace kiln::mcp {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8765;  // 0 picks a free port
  http::HttpGuardOptions guard;
  std::size_t max_request_bytes = 4u << 20;
  std::size_t max_sessions = 256;  // the least recently used idle session is ended beyond this
  Recorder* recorder = nullptr;
};

class HttpTransport {
 public:
  HttpTransport(const Server& server, HttpOptions options);
  ~HttpTransport();
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Binds the socket; returns the port (useful with port 0). Refuses a
  // non-loopback address without a bearer token.
  Result<int> bind();
  // Serves until stop(); blocks.
  void serve();
  void stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::mcp
