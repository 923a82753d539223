// The checks made on every HTTP request before MCP sees it: Origin against an
// allow-list (DNS-rebinding protection), Host on a loopback bind, the bearer
// token, and the protocol-version header.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kiln::http {

// Origins of pages on this machine: http(s)://localhost, 127.0.0.1 or [::1], any port.
bool is_loopback_origin(const std::string& origin);
bool is_loopback_host(const std::string& host);  // a bind address or a Host header value

struct HttpGuardOptions {
  std::vector<std::string> allowed_origins;  // exact origins allowed besides loopback ones
  std::optional<std::string> bearer_token;
  bool loopback_bind = true;  // then the Host header must name this machine too
};

struct GuardVerdict {
  int status = 0;  // 0 when the request may proceed, else the HTTP status to answer
  std::string message;
};

// Headers are passed as found; an absent header is nullopt.
GuardVerdict check_http_request(const HttpGuardOptions& options,
                                const std::optional<std::string>& origin,
                                const std::optional<std::string>& host,
                                const std::optional<std::string>& authorization);

// Constant-time comparison, so the token cannot be guessed byte by byte from timings.
bool tokens_equal(const std::string& a, const std::string& b);

}  // namespace kiln::http
