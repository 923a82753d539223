// The HTTP server under `kiln mcp --http` and `kiln runner`: one cpp-httplib server,
// bound (never off loopback without a bearer token), served, stopped from another
// thread even while it is still starting, and the request guard applied to its
// requests. Routes and replies are the caller's: it adds them to server().
//
// <httplib.h> stays out of this header (it is large); callers that add routes
// include it in their .cpp.
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "kiln/base/result.h"
#include "kiln/http/request_guard.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace kiln::http {

struct ListenerOptions {
  std::string host = "127.0.0.1";
  int port = 0;            // 0: the kernel picks a free one (bind() returns it)
  HttpGuardOptions guard;  // loopback_bind is set by bind() from host
  // The flag that changes the address, named when it cannot be bound: "--http HOST:PORT".
  std::string address_flag = "--listen HOST:PORT";
  // What to do instead, said when a non-loopback bind has no bearer token.
  std::string token_advice = "pass --token-file FILE, or bind 127.0.0.1";
  std::size_t max_request_bytes = 4u << 20;  // 413 beyond
  int threads = 32;                          // requests served at once
  int io_timeout_seconds = 30;               // read and write, each
  int keep_alive_seconds = 5;                // an idle keep-alive connection is closed after this
};

class Listener {
 public:
  explicit Listener(ListenerOptions options);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // For routes and handlers, added before serve().
  httplib::Server& server();

  // The refusal bind() makes first: a non-loopback host needs a bearer token. For a
  // caller that wants it before set-up of its own.
  Status check_address() const;
  // Binds the socket; returns the port. Errors name token_advice or address_flag.
  Result<int> bind();
  // Serves until stop(); blocks. Returns at once when stop() came first.
  void serve();
  // From any thread, at any time: before serve(), while it starts, or while it serves.
  void stop();

  const ListenerOptions& options() const;
  int port() const;  // after bind()

  // Checks a request's Origin, Host and Authorization. On a refusal, sets the status (and
  // WWW-Authenticate: Bearer on a 401) and returns the verdict; the body, in the
  // server's own error format, is the caller's to write.
  GuardVerdict guard(const httplib::Request& request, httplib::Response& response) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// A request header as found; nullopt when it is absent.
std::optional<std::string> request_header(const httplib::Request& request, const char* name);

// What a handler threw, for the exception handler's reply and log.
std::string exception_text(const std::exception_ptr& error);

}  // namespace kiln::http
