#include "kiln/replay/volatile_fields.h"

#include <array>
#include <regex>

namespace kiln::replay {

namespace {

constexpr std::array<std::string_view, 21> kDefaults = {
    // times and durations
    "seconds", "*_seconds", "*_s", "*_ms", "*_us",
    // cache hits
    "cache_hit",
    // ids minted per run or per process
    "job_id", "result_id", "revalidation_id", "decision_id", "taskId", "sessionId", "requestState",
    // timestamps
    "ts", "timestamp", "*_at", "*At", "started_unix",
    // the server's version, which a newer kiln changes
    "/result/serverInfo/version", "/result/_meta/io.modelcontextprotocol~1serverInfo/version",
    "/error/data/serverInfo/version"};

constexpr std::array<std::string_view, 8> kVerdictKeys = {
    "passed", "total", "mismatches", "nan", "inf", "registers", "spills", "distinct_findings"};

// One JSON pointer segment unescaped (~1 is /, ~0 is ~); false on a bad escape.
bool unescape(std::string_view segment, std::string& out) {
  out.clear();
  for (size_t i = 0; i < segment.size(); ++i) {
    if (segment[i] != '~') {
      out += segment[i];
      continue;
    }
    if (i + 1 >= segment.size() || (segment[i + 1] != '0' && segment[i + 1] != '1')) return false;
    out += segment[i + 1] == '0' ? '~' : '/';
    ++i;
  }
  return true;
}

}  // namespace

const std::span<const std::string_view> kDefaultVolatileFields{kDefaults};
const std::span<const std::string_view> kVerdictNumbers{kVerdictKeys};

bool is_verdict_number(std::string_view key) {
  for (auto verdict : kVerdictKeys)
    if (key == verdict) return true;
  return false;
}

std::string mask_measured_text(std::string_view text) {
  static const std::regex kUrl(R"(\bhttps?://[^\s,;)\]]+)");
  // A number standing alone (not inside a word or a hex id), with its sign, exponent and a
  // unit letter or % glued to it ("1.100x", "65.7%"); an "N/M" count is kept whole.
  static const std::regex kNumber(
      R"((^|[^\w./])([-+]?\d+(\.\d+)?([eE][-+]?\d+)?)(?![\w./]*\d)(?!/\d))");
  std::string out = std::regex_replace(std::string(text), kUrl, "<url>");
  return std::regex_replace(out, kNumber, "$1<n>");
}

bool glob_match(std::string_view glob, std::string_view text) {
  // Iterative matching with one backtrack point, enough for `*` alone.
  size_t g = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (g < glob.size() && glob[g] == '*') {
      star = g++;
      mark = t;
    } else if (g < glob.size() && glob[g] == text[t]) {
      ++g;
      ++t;
    } else if (star != std::string_view::npos) {
      g = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

IgnoreList IgnoreList::defaults() {
  IgnoreList list;
  for (auto pattern : kDefaultVolatileFields) (void)list.add(pattern);
  return list;
}

Status IgnoreList::add(std::string_view pattern) {
  if (pattern.empty())
    return make_error("an empty --ignore pattern; pass a JSON pointer (/result/x) or a key (x)");
  Pattern compiled;
  if (pattern.front() != '/') {
    compiled.anywhere = true;
    compiled.segments.emplace_back(pattern);
  } else {
    size_t start = 1;
    for (;;) {
      const size_t slash = pattern.find('/', start);
      std::string segment;
      if (!unescape(pattern.substr(start, slash - start), segment))
        return make_error("--ignore " + std::string(pattern) +
                          ": a `~` in a JSON pointer must be ~0 (for ~) or ~1 (for /)");
      compiled.segments.push_back(std::move(segment));
      if (slash == std::string_view::npos) break;
      start = slash + 1;
    }
  }
  patterns_.emplace_back(pattern);
  compiled_.push_back(std::move(compiled));
  return Ok{};
}

bool IgnoreList::ignores(const std::vector<std::string>& path) const {
  for (const auto& p : compiled_) {
    if (p.anywhere) {
      if (!path.empty() && glob_match(p.segments.front(), path.back())) return true;
      continue;
    }
    if (p.segments.size() != path.size()) continue;
    bool all = true;
    for (size_t i = 0; i < path.size() && all; ++i) all = glob_match(p.segments[i], path[i]);
    if (all) return true;
  }
  return false;
}

std::string mask_volatile_text(std::string_view text) {
  // Cheap test first: most strings have no digit and nothing to mask.
  bool digit = false;
  for (char c : text) digit = digit || (c >= '0' && c <= '9');
  const bool cache = text.find("cache hit, ") != std::string_view::npos;
  if (!digit && !cache) return std::string(text);
  static const std::regex kTimestamp(
      R"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?)");
  static const std::regex kId(R"(\b(job|j|r)-[0-9a-f]{16}\b)");
  // nvcc names an anonymous namespace after a hash of where it compiled the file.
  static const std::regex kAnonymous(R"(_GLOBAL__N__[0-9a-f]{8}_)");
  static const std::regex kDuration(R"(\b\d+(\.\d+)?(e[+-]?\d+)? ?(ns|us|µs|ms|s|min)\b)");
  std::string out(text);
  if (cache) out = std::regex_replace(out, std::regex("cache hit, "), "");
  if (!digit) return out;
  out = std::regex_replace(out, kTimestamp, "<time>");
  out = std::regex_replace(out, kId, "<id>");
  out = std::regex_replace(out, kAnonymous, "_GLOBAL__N__<hash>_");
  out = std::regex_replace(out, kDuration, "<duration>");
  return out;
}

}  // namespace kiln::replay
