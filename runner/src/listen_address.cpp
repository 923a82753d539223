#include "kiln/runner/listen_address.h"

namespace kiln::runner {

Result<HostPort> parse_host_port(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return make_error("'" + text + "' is not HOST:PORT; write e.g. 127.0.0.1:8000");
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  std::string port_text = text.substr(colon + 1);
  if (port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos)
    return make_error("'" + port_text + "' in '" + text + "' is not a port (0-65535)");
  int port = std::stoi(port_text);
  if (port > 65535)
    return make_error("'" + port_text + "' in '" + text + "' is not a port (0-65535)");
  return HostPort{host, port};
}

Result<HostPort> parse_runner_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind("https://", 0) == 0)
    return make_error(
        "runner URL " + url +
        ": https is not supported; use http:// over a trusted network or an SSH tunnel "
        "(ssh -L 8000:127.0.0.1:8000 gpu-host, then KILN_RUNNER=http://127.0.0.1:8000)");
  if (url.rfind(scheme, 0) != 0)
    return make_error("runner URL '" + url +
                      "' must start with http://, e.g. http://gpu-host:8000");
  std::string rest = url.substr(scheme.size());
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.find('/') != std::string::npos)
    return make_error("runner URL '" + url + "' has a path; give only http://HOST:PORT");
  auto address = parse_host_port(rest);
  if (!address) return make_error("runner URL '" + url + "': " + address.error().message);
  return address;
}

std::string runner_url(const HostPort& address) {
  std::string host =
      address.host.find(':') != std::string::npos ? "[" + address.host + "]" : address.host;
  return "http://" + host + ":" + std::to_string(address.port);
}

}  // namespace kiln::runner
