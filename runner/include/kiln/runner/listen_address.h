// HOST:PORT as `kiln runner --listen` and runner URLs spell it.
#pragma once

#include <string>

#include "kiln/base/result.h"

namespace kiln::runner {

struct HostPort {
  std::string host;  // without brackets for IPv6
  int port = 0;
};

// "127.0.0.1:8000", "[::1]:8000", "gpu-box:8000".
Result<HostPort> parse_host_port(const std::string& text);

// "http://host:port" (a trailing "/" allowed; https is refused with what to do instead).
Result<HostPort> parse_runner_url(const std::string& url);

// "http://127.0.0.1:8000", "http://[::1]:8000".
std::string runner_url(const HostPort& address);

}  // namespace kiln::runner
