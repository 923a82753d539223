// A JSON value together with the path that reached it ("workloads[3].K"), so every problem
// found while reading a document (task.json, a runner job body, job.json) names its field.
// The one reader of typed JSON fields in kiln: each read checks the type (and the range, where
// one is given) and throws JsonFieldError naming the field. The exception stays inside the
// library that reads: it catches JsonFieldError where reading starts and returns a Result (or
// its own error type) across its boundary.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

struct JsonFieldError {
  std::string field;    // "task.sha256", "workloads[2]"; "" for the whole document
  std::string message;  // what is wrong and what to do
  // "FIELD: MESSAGE", or the message alone for the whole document.
  std::string text() const { return field.empty() ? message : field + ": " + message; }
};

class JsonField {
 public:
  // `guide` names the document that describes the format ("tasks/FORMAT.md"); hints point
  // there. It must outlive the field and every field read from it (a string literal).
  JsonField(const nlohmann::json& value, std::string path, std::string_view guide);

  const std::string& path() const { return path_; }
  const nlohmann::json& json() const { return value_; }
  std::string_view guide() const { return guide_; }

  // Object access. `at` requires the member; `find` returns nullopt when it is absent.
  JsonField at(std::string_view key) const;
  std::optional<JsonField> find(std::string_view key) const;
  // Rejects members outside `allowed` (catches typos such as "workload").
  void allow_only(std::initializer_list<std::string_view> allowed) const;
  std::vector<std::string> keys() const;

  // Array access.
  std::vector<JsonField> elements() const;

  // Typed reads; each throws JsonFieldError naming this field when the type or range is wrong.
  const nlohmann::json& object() const;
  std::string string() const;                                // any string, may be empty
  std::string nonempty_string() const;                       // at least one non-space character
  std::string identifier() const;                            // [A-Za-z_][A-Za-z0-9_]*
  int64_t positive_integer() const;                          // JSON integer >= 1
  int64_t integer_between(int64_t low, int64_t high) const;  // JSON integer in [low, high]
  uint64_t unsigned_integer() const;                         // JSON integer >= 0, up to 2^64-1
  double number() const;                                     // finite JSON number
  double nonnegative_number() const;
  double number_above(double low, double high) const;  // finite, in (low, high]
  std::vector<std::string> string_list() const;        // array of non-empty strings
  // An array of at most `max` non-empty strings, none listed twice.
  std::vector<std::string> distinct_string_list(
      size_t max = std::numeric_limits<size_t>::max()) const;

  [[noreturn]] void fail(const std::string& problem) const;

 private:
  std::string child_path(std::string_view key) const;
  [[noreturn]] void fail_type(const char* wanted) const;

  const nlohmann::json& value_;
  std::string path_;
  std::string_view guide_;
};

bool is_identifier(std::string_view text);

}  // namespace kiln
