// Fuzz target: what kiln decides about one HTTP request before MCP handles it, from the bytes a
// client controls: the request guard (kiln_http: Origin, Host, bearer token), then, for a
// request it lets through, the body as the Streamable HTTP transport reads it (parse_json_text,
// the Exchange that collects the request ids it must answer, parse_message on each message) and
// the MCP-Protocol-Version header.
//
// The input is headers, one "Name: value" per line, a blank line, then the body. Three
// pseudo-headers set the server's side: "X-Fuzz-Token: T" (a bearer token is required),
// "X-Fuzz-Allow: ORIGIN" (one more allowed origin, repeatable), "X-Fuzz-Bind: public" (not a
// loopback bind, so Host is not checked).
//
// Properties: the verdict is 0, 401 or 403 and agrees with the rules it enforces; a refusal
// serializes as the transports write it; the Exchange waits exactly for the body's requests.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "kiln/http/request_guard.h"
#include "kiln/mcp/http_exchange.h"
#include "kiln/mcp/json_rpc.h"
#include "kiln/mcp/protocol_version.h"

namespace {

using kiln::fuzz::check;
using kiln::fuzz::check_wire;
using kiln::mcp::json;

struct Request {
  kiln::http::HttpGuardOptions options;
  std::optional<std::string> origin, host, authorization, version, accept;
  std::string body;
};

// "Name: value" lines up to the first empty line; names compare case-insensitively, as in HTTP.
Request read_request(std::string_view input) {
  Request request;
  size_t start = 0;
  while (start < input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    std::string_view line = input.substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name(line.substr(0, colon));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (name == "origin") request.origin = std::string(value);
    if (name == "host") request.host = std::string(value);
    if (name == "authorization") request.authorization = std::string(value);
    if (name == "mcp-protocol-version") request.version = std::string(value);
    if (name == "accept") request.accept = std::string(value);
    if (name == "x-fuzz-token") request.options.bearer_token = std::string(value);
    if (name == "x-fuzz-allow") request.options.allowed_origins.emplace_back(value);
    if (name == "x-fuzz-bind") request.options.loopback_bind = value != "public";
  }
  request.body = std::string(input.substr(std::min(start, input.size())));
  return request;
}

void check_verdict(const Request& q, const kiln::http::GuardVerdict& verdict) {
  check(verdict.status == 0 || verdict.status == 401 || verdict.status == 403,
        "the guard answers 0, 401 or 403");
  if (verdict.status != 0) {
    check(!verdict.message.empty(), "a refusal says why");
    // Both servers put the message in a JSON error body.
    const json reply = kiln::mcp::make_error_response(
        nullptr, kiln::mcp::RpcError{kiln::mcp::error_code::kInvalidRequest, verdict.message, {}});
    check_wire(reply, "a refusal is a JSON reply");
    return;
  }
  if (q.options.bearer_token) {
    check(q.authorization && *q.authorization == "Bearer " + *q.options.bearer_token,
          "a request through the guard carries the bearer token");
  }
  if (q.origin && !q.origin->empty()) {
    bool listed = false;
    for (const auto& allowed : q.options.allowed_origins) listed = listed || allowed == *q.origin;
    check(*q.origin != "null" && (listed || kiln::http::is_loopback_origin(*q.origin)),
          "a request through the guard comes from an allowed origin");
  }
  if (q.options.loopback_bind && q.host && !q.host->empty()) {
    check(kiln::http::is_loopback_host(*q.host), "on a loopback bind, Host names this machine");
  }
}

// The request ids the Exchange must wait for: those of the body's requests.
std::set<std::string> request_keys(const json& body) {
  std::set<std::string> keys;
  auto note = [&keys](const json& message) {
    auto parsed = kiln::mcp::parse_message(message);
    if (auto* m = std::get_if<kiln::mcp::Message>(&parsed); m && m->is_request())
      keys.insert(kiln::mcp::id_key(m->id));
  };
  if (body.is_array()) {
    for (const auto& message : body) note(message);
  } else {
    note(body);
  }
  return keys;
}

void check_body(const Request& q) {
  auto parsed = kiln::mcp::parse_json_text(q.body);
  if (auto* rejected = std::get_if<kiln::mcp::RejectedMessage>(&parsed)) {
    check(rejected->error.code == kiln::mcp::error_code::kParseError, "bad JSON is a -32700");
    check_wire(make_error_response(rejected->id, rejected->error), "a parse error is a JSON reply");
    return;
  }
  const json& body = std::get<json>(parsed);
  const bool sse = !q.accept || q.accept->empty() ||
                   q.accept->find("text/event-stream") != std::string::npos ||
                   q.accept->find("*/*") != std::string::npos;
  kiln::mcp::Exchange exchange(body, sse);
  check(exchange.is_batch() == body.is_array(), "an array body is a batch");
  // Requests the session would answer (a valid JSON-RPC request in the body) are awaited; an
  // id the Exchange awaits that parse_message rejects is answered by the session's rejection.
  for (const auto& key : request_keys(body))
    check(exchange.pending_keys().count(key) == 1, "the Exchange waits for every request");
  if (q.version) {
    (void)kiln::mcp::is_supported_protocol_version(*q.version);
    (void)kiln::mcp::protocol_allows_batches(*q.version);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Request request = read_request(std::string_view(reinterpret_cast<const char*>(data), size));
  if (request.origin) (void)kiln::http::is_loopback_origin(*request.origin);
  if (request.host) (void)kiln::http::is_loopback_host(*request.host);
  if (request.authorization && request.options.bearer_token) {
    check(kiln::http::tokens_equal(*request.authorization, *request.options.bearer_token) ==
              (*request.authorization == *request.options.bearer_token),
          "tokens_equal is equality");
  }
  const kiln::http::GuardVerdict verdict = kiln::http::check_http_request(
      request.options, request.origin, request.host, request.authorization);
  check_verdict(request, verdict);
  if (verdict.status == 0) check_body(request);
  return 0;
}
