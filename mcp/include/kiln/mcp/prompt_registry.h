// Prompts: named message templates a client can offer its user.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/mcp/completion.h"
#include "kiln/mcp/input_required.h"

namespace kiln::mcp {

struct PromptArgument {
  std::string name;
  std::string description;
  bool required = false;
  Completer complete = {};  // completion/complete; none: completes to nothing
};

struct Prompt {
  std::string name;
  std::string title;
  std::string description;
  std::vector<PromptArgument> arguments;
  // Returns the text of the single user message.
  std::function<Result<std::string>(const std::map<std::string, std::string>&)> render;
  // Instead of `render`, for prompts whose messages are more than one text: the
  // messages array itself (role and content block each).
  std::function<Result<nlohmann::json>(const std::map<std::string, std::string>&)> render_messages =
      {};
  // Asked before rendering, where the revision allows: input the prompt still needs
  // from the client (nullopt: none, render now).
  std::function<std::optional<InputRequired>(const std::map<std::string, std::string>&,
                                             const ClientInput&)>
      needs_input = {};
};

class PromptRegistry {
 public:
  void add(Prompt prompt);
  nlohmann::json list() const;  // prompts/list
  bool contains(const std::string& name) const { return prompts_.count(name) != 0; }
  // prompts/get; an error names a missing or unknown argument.
  Result<nlohmann::json> get(const std::string& name, const nlohmann::json& arguments) const;
  // The same for a multi round-trip request: the prompt, or the input it needs first.
  Result<std::variant<nlohmann::json, InputRequired>> get(const std::string& name,
                                                          const nlohmann::json& arguments,
                                                          const ClientInput& input) const;
  // completion/complete for argument `argument` of prompt `name`; an error names an
  // unknown prompt or argument.
  Result<nlohmann::json> complete(const std::string& name, const std::string& argument,
                                  const std::string& prefix,
                                  const std::map<std::string, std::string>& context) const;

 private:
  std::map<std::string, Prompt> prompts_;
};

}  // namespace kiln::mcp
