#include "kiln/http/request_guard.h"

#include <arpa/inet.h>

#include <algorithm>

namespace kiln::http {
namespace {

// "localhost:8765" -> "localhost", "[::1]:80" -> "[::1]".
std::string strip_port(const std::string& host) {
  if (!host.empty() && host.front() == '[') {
    auto close = host.find(']');
    return close == std::string::npos ? host : host.substr(0, close + 1);
  }
  auto colon = host.find(':');
  if (colon != std::string::npos && host.find(':', colon + 1) != std::string::npos)
    return host;  // bare IPv6
  return colon == std::string::npos ? host : host.substr(0, colon);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

bool is_loopback_host(const std::string& host) {
  std::string name = lower(strip_port(host));
  if (name == "localhost" || name == "[::1]" || name == "::1") return true;
  // 127.0.0.0/8, only as a literal address: "127.evil.example" is a DNS name.
  in_addr address{};
  return inet_pton(AF_INET, name.c_str(), &address) == 1 && (ntohl(address.s_addr) >> 24) == 127;
}

bool is_loopback_origin(const std::string& origin) {
  std::string o = lower(origin);
  for (const char* scheme : {"http://", "https://"}) {
    std::string prefix(scheme);
    if (o.rfind(prefix, 0) == 0) {
      std::string rest = o.substr(prefix.size());
      if (rest.find('/') != std::string::npos) return false;  // an origin has no path
      return is_loopback_host(rest);
    }
  }
  return false;
}

bool tokens_equal(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

GuardVerdict check_http_request(const HttpGuardOptions& options,
                                const std::optional<std::string>& origin,
                                const std::optional<std::string>& host,
                                const std::optional<std::string>& authorization) {
  if (origin && !origin->empty() && *origin != "null") {
    bool allowed = is_loopback_origin(*origin) ||
                   std::find(options.allowed_origins.begin(), options.allowed_origins.end(),
                             *origin) != options.allowed_origins.end();
    if (!allowed) {
      return {403, "Origin " + *origin + " is not allowed; start kiln with --allow-origin " +
                       *origin + " if this page should reach it"};
    }
  } else if (origin && *origin == "null") {
    return {403, "Origin null (a sandboxed or file page) is not allowed"};
  }
  if (options.loopback_bind && host && !host->empty() && !is_loopback_host(*host)) {
    return {403, "Host " + *host + " does not name this machine; kiln listens on loopback only"};
  }
  if (options.bearer_token) {
    const std::string prefix = "Bearer ";
    if (!authorization || authorization->rfind(prefix, 0) != 0 ||
        !tokens_equal(authorization->substr(prefix.size()), *options.bearer_token)) {
      return {401, "missing or wrong bearer token: send Authorization: Bearer <token>"};
    }
  }
  return {};
}

}  // namespace kiln::http
