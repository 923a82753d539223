// A JSON value together with the path that reached it ("workloads[3].K"), so every
// problem found while reading task.json can name its field. Internal to kiln_tasks.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::tasks {

// Thrown while reading a task file and caught in load_task, which turns it into
// "FILE: FIELD: PROBLEM". Never leaves the library.
struct FieldError {
  std::string field;    // "" for the whole document
  std::string message;  // what is wrong and what to do
};

class JsonField {
 public:
  JsonField(const nlohmann::json& value, std::string path);

  const std::string& path() const { return path_; }
  const nlohmann::json& json() const { return value_; }

  // Object access. `at` requires the member; `find` returns nullopt when it is absent.
  JsonField at(std::string_view key) const;
  std::optional<JsonField> find(std::string_view key) const;
  // Rejects members outside `allowed` (catches typos such as "workload").
  void allow_only(std::initializer_list<std::string_view> allowed) const;
  std::vector<std::string> keys() const;

  // Array access.
  std::vector<JsonField> elements() const;

  // Typed reads; each throws FieldError naming this field when the type is wrong.
  const nlohmann::json& object() const;
  std::string string() const;           // any string, may be empty
  std::string nonempty_string() const;  // at least one non-space character
  std::string identifier() const;       // [A-Za-z_][A-Za-z0-9_]*
  int64_t positive_integer() const;     // JSON integer >= 1
  double number() const;                // finite JSON number
  double nonnegative_number() const;
  std::vector<std::string> string_list() const;  // array of non-empty strings

  [[noreturn]] void fail(const std::string& problem) const;

 private:
  const nlohmann::json& value_;
  std::string path_;
};

bool is_identifier(std::string_view text);

}  // namespace kiln::tasks
