#include "kiln/mcp/completion.h"

namespace kiln::mcp {

using json = nlohmann::json;

json completion_result(const std::vector<std::string>& candidates, const std::string& prefix) {
  json values = json::array();
  std::size_t total = 0;
  for (const auto& candidate : candidates) {
    if (candidate.compare(0, prefix.size(), prefix) != 0) continue;
    ++total;
    if (values.size() < kMaxCompletionValues) values.push_back(candidate);
  }
  return json{{"completion",
               {{"values", std::move(values)},
                {"total", total},
                {"hasMore", total > kMaxCompletionValues}}}};
}

std::map<std::string, std::string> completion_context(const json& params) {
  std::map<std::string, std::string> out;
  if (!params.is_object() || !params.contains("context")) return out;
  const json& context = params["context"];
  if (!context.is_object() || !context.contains("arguments")) return out;
  const json& arguments = context["arguments"];
  if (!arguments.is_object()) return out;
  for (const auto& [name, value] : arguments.items())
    if (value.is_string()) out[name] = value.get<std::string>();
  return out;
}

}  // namespace kiln::mcp
