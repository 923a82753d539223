// completion/complete: the values a prompt argument or a resource-template
// variable can take, offered by whoever declared the argument.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kiln::mcp {

// Every value the argument can take now; `context` holds the other arguments the
// client already filled in (e.g. the zoo id while completing the file name).
using Completer =
    std::function<std::vector<std::string>(const std::map<std::string, std::string>& context)>;

// The spec allows at most 100 values in one completion result.
inline constexpr std::size_t kMaxCompletionValues = 100;

// The completion result object for the candidates starting with `prefix`, in the
// candidates' order: {"completion": {"values", "total", "hasMore"}}.
nlohmann::json completion_result(const std::vector<std::string>& candidates,
                                 const std::string& prefix);

// completion/complete's params.context.arguments as a string map (other values dropped).
std::map<std::string, std::string> completion_context(const nlohmann::json& params);

}  // namespace kiln::mcp
