#include "kiln/mcp/prompt_registry.h"

namespace kiln::mcp {

using json = nlohmann::json;
using Answer = std::variant<json, InputRequired>;

void PromptRegistry::add(Prompt prompt) {
  std::string name = prompt.name;
  prompts_.emplace(std::move(name), std::move(prompt));
}

json PromptRegistry::list() const {
  json out = json::array();
  for (const auto& [name, prompt] : prompts_) {
    json arguments = json::array();
    for (const auto& a : prompt.arguments)
      arguments.push_back(
          {{"name", a.name}, {"description", a.description}, {"required", a.required}});
    out.push_back({{"name", prompt.name},
                   {"title", prompt.title},
                   {"description", prompt.description},
                   {"arguments", std::move(arguments)}});
  }
  return json{{"prompts", std::move(out)}};
}

Result<json> PromptRegistry::get(const std::string& name, const json& arguments) const {
  auto answer = get(name, arguments, ClientInput{});
  if (!answer) return answer.error();
  return std::get<json>(std::move(*answer));
}

Result<std::variant<json, InputRequired>> PromptRegistry::get(const std::string& name,
                                                              const json& arguments,
                                                              const ClientInput& input) const {
  auto it = prompts_.find(name);
  if (it == prompts_.end()) return make_error("unknown prompt `" + name + "`; call prompts/list");
  const Prompt& prompt = it->second;
  std::map<std::string, std::string> values;
  if (arguments.is_object()) {
    for (const auto& [key, value] : arguments.items()) {
      bool known = false;
      for (const auto& a : prompt.arguments) known = known || a.name == key;
      if (!known) return make_error("prompt `" + name + "` has no argument `" + key + "`");
      if (!value.is_string()) return make_error("prompt argument `" + key + "` must be a string");
      values[key] = value.get<std::string>();
    }
  }
  for (const auto& a : prompt.arguments)
    if (a.required && !values.count(a.name))
      return make_error("prompt `" + name + "` needs the argument `" + a.name + "`");
  if (prompt.needs_input && input.can_ask)
    if (auto ask = prompt.needs_input(values, input)) return Answer(std::move(*ask));
  if (prompt.render_messages) {
    auto messages = prompt.render_messages(values);
    if (!messages) return messages.error();
    return Answer(json{{"description", prompt.description}, {"messages", std::move(*messages)}});
  }
  auto text = prompt.render(values);
  if (!text) return text.error();
  return Answer(
      json{{"description", prompt.description},
           {"messages",
            json::array({{{"role", "user"}, {"content", {{"type", "text"}, {"text", *text}}}}})}});
}

Result<json> PromptRegistry::complete(const std::string& name, const std::string& argument,
                                      const std::string& prefix,
                                      const std::map<std::string, std::string>& context) const {
  auto it = prompts_.find(name);
  if (it == prompts_.end()) return make_error("unknown prompt `" + name + "`; call prompts/list");
  for (const auto& a : it->second.arguments) {
    if (a.name != argument) continue;
    return completion_result(a.complete ? a.complete(context) : std::vector<std::string>{}, prefix);
  }
  return make_error("prompt `" + name + "` has no argument `" + argument + "`");
}

}  // namespace kiln::mcp
