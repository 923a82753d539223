// Multi round-trip requests (protocol revision 2026-07-28, SEP-2322): a handler
// that needs something only the client can give (an answer from its user, an LLM
// completion, its roots) answers with InputRequired; the client retries the same
// request with `inputResponses` and the `requestState` it was handed.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kiln::mcp {

struct InputRequired {
  nlohmann::json input_requests = nlohmann::json::object();  // key -> {"method", "params"}
  std::string request_state;  // the handler's own state; kiln seals it before it leaves
};

// What a retry brought, as the handler sees it.
struct ClientInput {
  bool can_ask = false;  // the request's revision has input-required results (2026-07-28)
  nlohmann::json responses = nlohmann::json::object();  // inputResponses
  std::string request_state;                            // opened: kiln checked its seal
  nlohmann::json client_capabilities = nlohmann::json::object();
};

// Seals request state with a keyed SHA-256 (nested, as HMAC nests it) under a
// key drawn at start-up, so a client can carry the state but not alter it, and a
// state from another kiln process is refused.
class RequestStateSeal {
 public:
  RequestStateSeal();  // a fresh random key
  explicit RequestStateSeal(std::string key);

  std::string seal(const std::string& state) const;
  // The state, or nullopt when the seal does not match (altered, or not kiln's).
  std::optional<std::string> open(const std::string& sealed) const;

 private:
  std::string tag(const std::string& state) const;
  std::string key_;
};

// The InputRequiredResult object (resultType "input_required") for the wire.
nlohmann::json input_required_result(const InputRequired& input, const RequestStateSeal& seal);

}  // namespace kiln::mcp
