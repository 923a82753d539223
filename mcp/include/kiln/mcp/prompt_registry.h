// Prompts: named message templates a client can offer its user.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::mcp {

struct PromptArgument {
  std::string name;
  std::string description;
  bool required = false;
};

struct Prompt {
  std::string name;
  std::string title;
  std::string description;
  std::vector<PromptArgument> arguments;
  // Returns the text of the single user message.
  std::function<Result<std::string>(const std::map<std::string, std::string>&)> render;
};

class PromptRegistry {
 public:
  void add(Prompt prompt);
  nlohmann::json list() const;  // prompts/list
  bool contains(const std::string& name) const { return prompts_.count(name) != 0; }
  // prompts/get; an error names a missing or unknown argument.
  Result<nlohmann::json> get(const std::string& name, const nlohmann::json& arguments) const;

 private:
  std::map<std::string, Prompt> prompts_;
};

}  // namespace kiln::mcp
