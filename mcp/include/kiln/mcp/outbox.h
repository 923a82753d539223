// Where a session's outgoing messages go; each transport provides one.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace kiln::mcp {

class Outbox {
 public:
  virtual ~Outbox() = default;

  // A notification; `about` is the id of the client request it belongs to
  // (progress, logs during a call), or null when it belongs to none.
  virtual void notify(const nlohmann::json& message, const nlohmann::json& about) = 0;

  // The end of a client request: its response, or nullopt when the client
  // cancelled it and gets none. `id` is null for a reply to a message whose id
  // could not be read (a parse error). Called exactly once per request.
  virtual void respond(const nlohmann::json& id, std::optional<nlohmann::json> response) = 0;
};

}  // namespace kiln::mcp
