#include "kiln/base/json_field.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "kiln/base/text.h"

namespace kiln {
namespace {

std::string type_name(const nlohmann::json& value) {
  if (value.is_number_integer()) return "an integer";
  if (value.is_number_float()) return "a non-integer number";
  return std::string(value.is_object() || value.is_array() ? "an " : "a ") + value.type_name();
}

// A short rendering of a value for messages; long values are cut.
std::string shown(const nlohmann::json& value) {
  std::string text = value.dump();
  if (text.size() > 40) text = std::string(utf8_prefix(text, 37)) + "...";
  return text;
}

// A bound as a reader writes it: 86400, not 86400.0.
std::string shown_bound(double bound) {
  if (std::isfinite(bound) && bound == std::floor(bound) && std::fabs(bound) < 1e15)
    return std::to_string(static_cast<int64_t>(bound));
  return nlohmann::json(bound).dump();
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

JsonField::JsonField(const nlohmann::json& value, std::string path, std::string_view guide)
    : value_(value), path_(std::move(path)), guide_(guide) {}

void JsonField::fail(const std::string& problem) const { throw JsonFieldError{path_, problem}; }

void JsonField::fail_type(const char* wanted) const {
  std::string hint = guide_.empty() ? "" : "; " + std::string(guide_) + " gives each field's type";
  fail(std::string("must be ") + wanted + ", got " + type_name(value_) + hint);
}

std::string JsonField::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

const nlohmann::json& JsonField::object() const {
  if (!value_.is_object()) fail_type("an object");
  return value_;
}

JsonField JsonField::at(std::string_view key) const {
  const auto& obj = object();
  const auto it = obj.find(key);
  if (it == obj.end()) {
    std::string where = guide_.empty() ? "" : " (see " + std::string(guide_) + ")";
    throw JsonFieldError{child_path(key), "is missing; add it" + where};
  }
  return JsonField(*it, child_path(key), guide_);
}

std::optional<JsonField> JsonField::find(std::string_view key) const {
  const auto& obj = object();
  const auto it = obj.find(key);
  if (it == obj.end()) return std::nullopt;
  return JsonField(*it, child_path(key), guide_);
}

void JsonField::allow_only(std::initializer_list<std::string_view> allowed) const {
  for (const auto& [key, value] : object().items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string list;
    for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    throw JsonFieldError{child_path(key), "is not a known field; remove it or use one of: " + list};
  }
}

std::vector<std::string> JsonField::keys() const {
  std::vector<std::string> out;
  for (const auto& [key, value] : object().items()) out.push_back(key);
  return out;
}

std::vector<JsonField> JsonField::elements() const {
  if (!value_.is_array()) fail_type("an array");
  std::vector<JsonField> out;
  out.reserve(value_.size());
  for (size_t i = 0; i < value_.size(); ++i) {
    out.emplace_back(value_[i], path_ + "[" + std::to_string(i) + "]", guide_);
  }
  return out;
}

std::string JsonField::string() const {
  if (!value_.is_string()) fail_type("a string");
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

int64_t JsonField::integer_between(int64_t low, int64_t high) const {
  if (value_.is_number_unsigned()) {
    // Unsigned: may lie beyond int64_t, so compare before converting.
    const auto v = value_.get<uint64_t>();
    if (high >= 0 && v <= static_cast<uint64_t>(high) && static_cast<int64_t>(v) >= low) {
      return static_cast<int64_t>(v);
    }
  } else if (value_.is_number_integer()) {
    const auto v = value_.get<int64_t>();
    if (v >= low && v <= high) return v;
  }
  fail("must be an integer between " + std::to_string(low) + " and " + std::to_string(high) +
       ", got " + shown(value_));
}

uint64_t JsonField::unsigned_integer() const {
  if (value_.is_number_unsigned()) return value_.get<uint64_t>();
  if (value_.is_number_integer() && value_.get<int64_t>() >= 0) {
    return static_cast<uint64_t>(value_.get<int64_t>());
  }
  fail("must be a whole number >= 0, got " + shown(value_));
}

double JsonField::number() const {
  if (!value_.is_number()) fail_type("a number");
  const double v = value_.get<double>();
  if (!std::isfinite(v)) fail("must be finite");
  return v;
}

double JsonField::nonnegative_number() const {
  const double v = number();
  if (v < 0) fail("must be a non-negative number, got " + shown(value_));
  return v;
}

double JsonField::number_above(double low, double high) const {
  const double v = number();
  if (!(v > low && v <= high)) {
    fail("must be greater than " + shown_bound(low) + " and at most " + shown_bound(high) +
         ", got " + shown(value_));
  }
  return v;
}

std::vector<std::string> JsonField::string_list() const {
  std::vector<std::string> out;
  for (const auto& element : elements()) out.push_back(element.nonempty_string());
  return out;
}

std::vector<std::string> JsonField::distinct_string_list(size_t max) const {
  const auto items = elements();
  if (items.size() > max) {
    fail("has " + std::to_string(items.size()) + " entries; list at most " + std::to_string(max));
  }
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::string text = item.nonempty_string();
    if (std::find(out.begin(), out.end(), text) != out.end())
      item.fail("'" + text + "' is listed twice; list each once");
    out.push_back(std::move(text));
  }
  return out;
}

}  // namespace kiln
