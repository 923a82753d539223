#include "kiln/replay/json_diff.h"

#include <set>

#include "kiln/base/json_text.h"
#include "kiln/base/text.h"

namespace kiln::replay {

using json = nlohmann::json;

namespace {

class Differ {
 public:
  Differ(const IgnoreList& ignore, size_t limit, Compare compare)
      : ignore_(ignore), limit_(limit), verdicts_only_(compare == Compare::kVerdictsOnly) {}

  void walk(const json* old, const json* now) {
    if (full()) return;
    if (!path_.empty() && ignore_.ignores(path_)) return;
    if (!old || !now) return add(old, now);
    if (old->is_object() && now->is_object()) return objects(*old, *now);
    if (old->is_array() && now->is_array()) return arrays(*old, *now);
    if (old->is_string() && now->is_string()) {
      if (mask(old->get_ref<const std::string&>()) != mask(now->get_ref<const std::string&>()))
        add(old, now);
      return;
    }
    if (verdicts_only_ && old->is_number() && now->is_number() &&
        (path_.empty() || !is_verdict_number(path_.back())))
      return;
    // 1 and 1.0 are one number to a client; compare numbers by value.
    if (old->is_number() && now->is_number()) {
      if (old->get<double>() != now->get<double>()) add(old, now);
      return;
    }
    if (*old != *now) add(old, now);
  }

  std::vector<Difference> out;
  bool truncated = false;

 private:
  bool full() {
    if (out.size() < limit_) return false;
    truncated = true;
    return true;
  }

  std::string mask(const std::string& text) const {
    return verdicts_only_ ? mask_measured_text(mask_volatile_text(text)) : mask_volatile_text(text);
  }

  void add(const json* old, const json* now) {
    if (full()) return;
    Difference d;
    d.path = json_pointer(path_);
    if (old) d.old = *old;
    if (now) d.now = *now;
    out.push_back(std::move(d));
  }

  void objects(const json& old, const json& now) {
    std::set<std::string> keys;
    for (auto it = old.begin(); it != old.end(); ++it) keys.insert(it.key());
    for (auto it = now.begin(); it != now.end(); ++it) keys.insert(it.key());
    for (const auto& key : keys) {
      path_.push_back(key);
      auto a = old.find(key), b = now.find(key);
      walk(a == old.end() ? nullptr : &*a, b == now.end() ? nullptr : &*b);
      path_.pop_back();
    }
  }

  void arrays(const json& old, const json& now) {
    const size_t n = std::max(old.size(), now.size());
    for (size_t i = 0; i < n; ++i) {
      path_.push_back(std::to_string(i));
      walk(i < old.size() ? &old[i] : nullptr, i < now.size() ? &now[i] : nullptr);
      path_.pop_back();
    }
  }

  const IgnoreList& ignore_;
  size_t limit_;
  bool verdicts_only_;
  std::vector<std::string> path_;
};

}  // namespace

std::vector<Difference> diff_json(const json& old, const json& now, const IgnoreList& ignore,
                                  size_t limit, bool* truncated, Compare compare) {
  Differ differ(ignore, limit, compare);
  differ.walk(&old, &now);
  if (truncated) *truncated = differ.truncated;
  return std::move(differ.out);
}

std::string json_pointer(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& segment : path) {
    out += '/';
    for (char c : segment) {
      if (c == '~')
        out += "~0";
      else if (c == '/')
        out += "~1";
      else
        out += c;
    }
  }
  return out;
}

std::string show_value(const std::optional<json>& value, size_t max_bytes) {
  if (!value) return "(absent)";
  std::string text = json_text(*value);
  if (text.size() <= max_bytes) return text;
  return std::string(utf8_prefix(text, max_bytes)) + "... (" + std::to_string(text.size()) +
         " bytes)";
}

}  // namespace kiln::replay
