// The differences between a recorded answer and its replay, each as the JSON pointer of what
// differs with the old and the new value, leaving out what an IgnoreList names and comparing
// strings with their volatile text masked (volatile_fields.h).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kiln/replay/volatile_fields.h"

namespace kiln::replay {

struct Difference {
  std::string path;                   // JSON pointer from the message's root ("" for the whole)
  std::optional<nlohmann::json> old;  // nullopt: not in the recorded answer
  std::optional<nlohmann::json> now;  // nullopt: not in the replayed answer
};

// What is compared. kVerdictsOnly is for the answer of a GPU call replayed on a runner: numbers
// only where is_verdict_number(key), strings through mask_measured_text too (volatile_fields.h).
enum class Compare { kEverything, kVerdictsOnly };

// At most `limit` differences, in document order (object keys sorted); `truncated` is set when
// there were more.
std::vector<Difference> diff_json(const nlohmann::json& old, const nlohmann::json& now,
                                  const IgnoreList& ignore, size_t limit = 50,
                                  bool* truncated = nullptr,
                                  Compare compare = Compare::kEverything);

// "/a/b~1c" from {"a", "b/c"}.
std::string json_pointer(const std::vector<std::string>& path);

// A value for a person: compact JSON cut to about `max_bytes`; "(absent)" for nullopt.
std::string show_value(const std::optional<nlohmann::json>& value, size_t max_bytes = 160);

}  // namespace kiln::replay
