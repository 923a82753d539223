#include "json_field.h"

#include <cctype>
#include <cmath>
#include <limits>

namespace kiln::tasks {
namespace {

constexpr const char* kTypeHint = "; tasks/FORMAT.md gives each field's type";

std::string type_name(const nlohmann::json& value) {
  if (value.is_number_integer()) return "an integer";
  if (value.is_number_float()) return "a non-integer number";
  return std::string(value.is_object() || value.is_array() ? "an " : "a ") + value.type_name();
}

// A short rendering of a value for messages; long values are cut.
std::string shown(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

}  // namespace

bool is_identifier(std::string_view text) {
  if (text.empty()) return false;
  if (!std::isalpha(static_cast<unsigned char>(text[0])) && text[0] != '_') return false;
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

JsonField::JsonField(const nlohmann::json& value, std::string path)
    : value_(value), path_(std::move(path)) {}

void JsonField::fail(const std::string& problem) const { throw FieldError{path_, problem}; }

const nlohmann::json& JsonField::object() const {
  if (!value_.is_object()) fail("must be an object, got " + type_name(value_) + kTypeHint);
  return value_;
}

JsonField JsonField::at(std::string_view key) const {
  const auto& obj = object();
  const std::string child = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  const auto it = obj.find(key);
  if (it == obj.end()) throw FieldError{child, "is missing; add it (see tasks/FORMAT.md)"};
  return JsonField(*it, child);
}

std::optional<JsonField> JsonField::find(std::string_view key) const {
  const auto& obj = object();
  const auto it = obj.find(key);
  if (it == obj.end()) return std::nullopt;
  return JsonField(*it, path_.empty() ? std::string(key) : path_ + "." + std::string(key));
}

void JsonField::allow_only(std::initializer_list<std::string_view> allowed) const {
  for (const auto& [key, value] : object().items()) {
    bool known = false;
    for (auto a : allowed) known = known || a == key;
    if (known) continue;
    std::string list;
    for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    throw FieldError{path_.empty() ? key : path_ + "." + key,
                     "is not a known field; remove it or use one of: " + list};
  }
}

std::vector<std::string> JsonField::keys() const {
  std::vector<std::string> out;
  for (const auto& [key, value] : object().items()) out.push_back(key);
  return out;
}

std::vector<JsonField> JsonField::elements() const {
  if (!value_.is_array()) fail("must be an array, got " + type_name(value_) + kTypeHint);
  std::vector<JsonField> out;
  out.reserve(value_.size());
  for (size_t i = 0; i < value_.size(); ++i) {
    out.emplace_back(value_[i], path_ + "[" + std::to_string(i) + "]");
  }
  return out;
}

std::string JsonField::string() const {
  if (!value_.is_string()) fail("must be a string, got " + type_name(value_) + kTypeHint);
  return value_.get<std::string>();
}

std::string JsonField::nonempty_string() const {
  std::string text = string();
  bool blank = true;
  for (char c : text) blank = blank && std::isspace(static_cast<unsigned char>(c));
  if (blank) fail("must not be empty; write a value");
  return text;
}

std::string JsonField::identifier() const {
  std::string text = string();
  if (!is_identifier(text)) {
    fail("must be an identifier (a letter or '_', then letters, digits or '_'), got " +
         shown(value_));
  }
  return text;
}

int64_t JsonField::positive_integer() const {
  if (value_.is_number_unsigned()) {
    const auto v = value_.get<uint64_t>();
    if (v >= 1 && v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return static_cast<int64_t>(v);
    }
  } else if (value_.is_number_integer()) {
    const auto v = value_.get<int64_t>();
    if (v >= 1) return v;
  }
  fail("must be a positive integer, got " + shown(value_) + "; write a whole number >= 1");
}

double JsonField::number() const {
  if (!value_.is_number()) fail("must be a number, got " + type_name(value_) + kTypeHint);
  const double v = value_.get<double>();
  if (!std::isfinite(v)) fail("must be finite");
  return v;
}

double JsonField::nonnegative_number() const {
  const double v = number();
  if (v < 0) fail("must be a non-negative number, got " + shown(value_));
  return v;
}

std::vector<std::string> JsonField::string_list() const {
  std::vector<std::string> out;
  for (const auto& element : elements()) out.push_back(element.nonempty_string());
  return out;
}

}  // namespace kiln::tasks
