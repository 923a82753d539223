#include "kiln/frontier/session_stats.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

namespace kiln::frontier {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Pending {
  std::string tool;
  int64_t sent_ms = 0;
};

// One recording file's requests and answers, matched by (session, id).
class SessionReader {
 public:
  explicit SessionReader(SessionStats& stats) : stats_(stats) {}

  void line(const std::string& text) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) return;
    json record = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object() || !record.contains("message") || !record["dir"].is_string()) {
      ++stats_.bad_lines;
      return;
    }
    int64_t ts = 0;
    if (record["ts"].is_string()) ts = parse_utc_ms(record["ts"].get<std::string>()).value_or(0);
    if (ts > 0) {
      if (stats_.first_ms == 0 || ts < stats_.first_ms) stats_.first_ms = ts;
      stats_.last_ms = std::max(stats_.last_ms, ts);
    }
    const std::string session = record.value("session", "");
    const bool incoming = record["dir"] == "in";
    const json& message = record["message"];
    if (message.is_array()) {  // a JSON-RPC batch (2025-03-26)
      for (const auto& item : message) one_message(item, session, incoming, ts);
    } else {
      one_message(message, session, incoming, ts);
    }
  }

  // Calls that were never answered.
  void finish() {
    for (const auto& [key, call] : pending_) ++tool(call.tool).unanswered;
    pending_.clear();
  }

 private:
  void one_message(const json& message, const std::string& session, bool incoming, int64_t ts) {
    if (!message.is_object() || !message.contains("id")) return;
    const std::string key = session + "\n" + message["id"].dump();
    if (incoming) {
      const std::string method = message.value("method", "");
      if (method == "initialize") ++stats_.sessions;
      if (method != "tools/call") return;
      const json params = message.value("params", json::object());
      std::string name = "(unnamed)";
      if (params.is_object() && params.contains("name") && params["name"].is_string())
        name = params["name"].get<std::string>();
      ++tool(name).calls;
      ++stats_.calls;
      pending_[key] = {name, ts};
      return;
    }
    auto it = pending_.find(key);
    if (it == pending_.end()) return;  // the answer to something other than a tool call
    ToolCallStats& stats = tool(it->second.tool);
    const bool failed =
        message.contains("error") || (message.contains("result") && message["result"].is_object() &&
                                      message["result"].value("isError", false) == true);
    if (failed) {
      ++stats.errors;
      ++stats_.errors;
    }
    if (ts > 0 && it->second.sent_ms > 0 && ts >= it->second.sent_ms) {
      const double seconds = static_cast<double>(ts - it->second.sent_ms) / 1000.0;
      stats.total_s += seconds;
      stats.max_s = std::max(stats.max_s, seconds);
    }
    pending_.erase(it);
  }

  ToolCallStats& tool(const std::string& name) {
    for (auto& t : stats_.tools)
      if (t.tool == name) return t;
    stats_.tools.push_back({});
    stats_.tools.back().tool = name;
    return stats_.tools.back();
  }

  SessionStats& stats_;
  std::map<std::string, Pending> pending_;
};

}  // namespace

std::optional<int64_t> parse_utc_ms(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.mmm]Z
  if (text.size() < 20 || text.back() != 'Z') return std::nullopt;
  auto digits = [&](size_t at, size_t n) -> std::optional<int> {
    int value = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (i >= text.size() || text[i] < '0' || text[i] > '9') return std::nullopt;
      value = value * 10 + (text[i] - '0');
    }
    return value;
  };
  auto year = digits(0, 4), month = digits(5, 2), day = digits(8, 2);
  auto hour = digits(11, 2), minute = digits(14, 2), second = digits(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || text[4] != '-' || text[7] != '-' ||
      text[10] != 'T' || text[13] != ':' || text[16] != ':')
    return std::nullopt;
  int millis = 0;
  if (text[19] == '.') {
    auto fraction = digits(20, 3);
    if (!fraction || text.size() != 24) return std::nullopt;
    millis = *fraction;
  } else if (text.size() != 20) {
    return std::nullopt;
  }
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 ||
      *second > 60)
    return std::nullopt;
  std::tm parts{};
  parts.tm_year = *year - 1900;
  parts.tm_mon = *month - 1;
  parts.tm_mday = *day;
  parts.tm_hour = *hour;
  parts.tm_min = *minute;
  parts.tm_sec = *second;
  const std::time_t seconds = timegm(&parts);
  return static_cast<int64_t>(seconds) * 1000 + millis;
}

SessionStats read_session_stats(const fs::path& dir) {
  SessionStats stats;
  std::error_code error;
  if (!fs::is_directory(dir, error)) return stats;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, error))
    if (entry.is_regular_file(error) && entry.path().extension() == ".jsonl")
      files.push_back(entry.path());
  if (error) stats.problems.push_back("cannot list " + dir.string() + ": " + error.message());
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in) {
      stats.problems.push_back("cannot read " + file.string());
      continue;
    }
    ++stats.files;
    SessionReader reader(stats);
    std::string text;
    while (std::getline(in, text)) reader.line(text);
    reader.finish();
  }
  std::stable_sort(stats.tools.begin(), stats.tools.end(),
                   [](const ToolCallStats& a, const ToolCallStats& b) {
                     return a.calls != b.calls ? a.calls > b.calls : a.tool < b.tool;
                   });
  return stats;
}

}  // namespace kiln::frontier
