// frontier/index.json: the frontier as a file in the worktree, regenerated from the store
// after every accepted change (never written by the agent). Its JSON Schema is
// frontier/index.schema.json; the tests validate every index kiln writes against it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/frontier/frontier_policy.h"

namespace kiln::frontier {

inline constexpr const char* kIndexSchemaId = "kiln-frontier-index/1";

// The index of `members` (the active ones are listed; best first, then by geomean).
nlohmann::json frontier_index(const std::string& task_name, const std::string& task_sha256,
                              const std::vector<Member>& members, const Budget& budget,
                              int64_t generated_ms);

}  // namespace kiln::frontier
