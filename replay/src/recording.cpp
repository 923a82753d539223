#include "kiln/replay/recording.h"

#include <algorithm>
#include <map>

#include "kiln/base/file.h"
#include "kiln/base/json_text.h"
#include "kiln/base/text.h"
#include "kiln/frontier/session_stats.h"
#include "kiln/mcp/protocol_version.h"

namespace kiln::replay {

using json = nlohmann::json;

namespace {

constexpr const char* kShape =
    "wants {\"ts\", \"dir\": \"in\"|\"out\", \"session\"?, \"message\"}, one per line, as "
    "`kiln mcp --record` writes";

bool usable_id(const json& message) {
  if (!message.is_object() || !message.contains("id")) return false;
  const json& id = message["id"];
  return id.is_string() || id.is_number_integer();
}

std::string id_text(const json& message) { return json_text(message["id"]); }

std::string known_revisions() {
  std::vector<std::string> all;
  for (auto v : mcp::supported_protocol_versions()) all.emplace_back(v);
  for (auto v : mcp::stateless_protocol_versions()) all.emplace_back(v);
  return join(all, ", ");
}

// Pairs requests with their answers, session by session, in the order the lines were written.
class Pairing {
 public:
  Pairing(Recording& recording, ReadMode mode) : rec_(recording), mode_(mode) {}

  Status run() {
    for (size_t i = 0; i < rec_.records.size(); ++i) index_requests(i);
    for (size_t i = 0; i < rec_.records.size(); ++i)
      if (auto done = pair(i); !done) return done;
    return Ok{};
  }

 private:
  struct Key {
    std::string session;
    bool from_client;  // whose request it is
    std::string id;
    auto operator<=>(const Key&) const = default;
  };

  // A request either way, or an invalid message from the client (answered with an error).
  static bool awaits_answer(const Record& r) {
    return r.kind == MessageKind::kRequest || (r.kind == MessageKind::kInvalid && r.incoming);
  }

  void index_requests(size_t i) {
    const Record& r = rec_.records[i];
    if (awaits_answer(r) && usable_id(r.message))
      requests_[{r.session, r.incoming, id_text(r.message)}].push_back(i);
  }

  Status problem(const Record& r, const std::string& what) {
    std::string text = rec_.name + ":" + std::to_string(r.line) + ": " + what;
    if (mode_ == ReadMode::kStrict) return make_error(text);
    rec_.warnings.push_back(text);
    return Ok{};
  }

  Status pair(size_t i) {
    Record& r = rec_.records[i];
    if (r.incoming && r.kind != MessageKind::kResponse) last_in_[r.session] = i;
    if (awaits_answer(r)) {
      if (usable_id(r.message)) pending_[{r.session, r.incoming, id_text(r.message)}] = i;
      return Ok{};
    }
    if (r.kind != MessageKind::kResponse) return Ok{};
    // A response from the server answers a client request, and the other way round.
    if (!usable_id(r.message)) return orphan(i);
    const Key key{r.session, !r.incoming, id_text(r.message)};
    auto it = pending_.find(key);
    if (it == pending_.end()) return unmatched(i, key);
    link(it->second, i);
    answered_[key] = r.line;
    pending_.erase(it);
    return check_version(rec_.records[*r.answers], r);
  }

  void link(size_t request, size_t response) {
    rec_.records[request].answer = response;
    rec_.records[response].answers = request;
  }

  // An answer without a usable id (the reply to raw text, or to a message it could not read):
  // it answers the client's last message in that session.
  Status orphan(size_t i) {
    Record& r = rec_.records[i];
    auto last = last_in_.find(r.session);
    if (r.incoming || last == last_in_.end() || rec_.records[last->second].answer)
      return problem(r, "a response with id " + id_text(r.message) +
                            " that answers no message before it in its session; the recording "
                            "was edited or is out of order");
    link(last->second, i);
    return Ok{};
  }

  Status unmatched(size_t i, const Key& key) {
    const Record& r = rec_.records[i];
    const char* whose = r.incoming ? "server" : "client";
    auto later = requests_.find(key);
    if (later != requests_.end()) {
      for (size_t j : later->second)
        if (j > i)
          return problem(r, std::string("a response to the ") + whose + "'s request " + key.id +
                                " before that request (line " +
                                std::to_string(rec_.records[j].line) +
                                "): the lines are out of order; `kiln mcp --record` writes them "
                                "as the messages pass, so the file was edited or two were "
                                "merged");
    }
    if (auto seen = answered_.find(key); seen != answered_.end())
      return problem(r, "a second response to request " + key.id + " (the first is on line " +
                            std::to_string(seen->second) + ")");
    return problem(r, std::string("a response to request ") + key.id + ", which the " + whose +
                          " never sent in this session");
  }

  // Only what this kiln speaks can be replayed: the revision a session negotiated, or the
  // stateless revisions server/discover offered.
  Status check_version(const Record& request, const Record& response) {
    const json& result = response.message.contains("result") ? response.message["result"] : json();
    const std::string method = request.message.value("method", "");
    if (method == "initialize" && result.is_object() && result.contains("protocolVersion")) {
      const json& version = result["protocolVersion"];
      if (!version.is_string() || !mcp::is_supported_protocol_version(version.get<std::string>()))
        return problem(response, "the session negotiated protocol revision " + json_text(version) +
                                     ", which this kiln does not speak (it speaks " +
                                     known_revisions() +
                                     "); replay it with the kiln that recorded it");
    }
    if (method == "server/discover" && result.is_object() &&
        result["supportedVersions"].is_array()) {
      for (const auto& v : result["supportedVersions"])
        if (v.is_string() && mcp::is_stateless_protocol_version(v.get<std::string>())) return Ok{};
      return problem(response, "server/discover offered " + json_text(result["supportedVersions"]) +
                                   ", none of which this kiln speaks (" + known_revisions() +
                                   "); replay it with the kiln that recorded it");
    }
    return Ok{};
  }

  Recording& rec_;
  ReadMode mode_;
  std::map<Key, std::vector<size_t>> requests_;  // every request, for "before its request"
  std::map<Key, size_t> pending_;
  std::map<Key, size_t> answered_;  // the line of the last answer
  std::map<std::string, size_t> last_in_;
};

// One line of the file into records; an error text (without "FILE:LINE: ") when it is none.
Result<std::vector<Record>> parse_line(std::string_view text, size_t line, size_t& batches) {
  auto parsed = parse_json_bounded(text);
  if (!parsed) return make_error(parsed.error().message);
  const json& value = *parsed;
  if (!value.is_object() || !value.contains("message") || !value["dir"].is_string() ||
      (value["dir"] != "in" && value["dir"] != "out") ||
      (value.contains("session") && !value["session"].is_string()) ||
      (value.contains("ts") && !value["ts"].is_string()))
    return make_error(std::string("is not a recorded message: ") + kShape);
  Record base;
  base.line = line;
  base.ts = value.value("ts", "");
  base.ts_ms = frontier::parse_utc_ms(base.ts).value_or(0);
  base.incoming = value["dir"] == "in";
  base.session = value.value("session", "");
  const json& message = value["message"];
  std::vector<Record> out;
  if (message.is_object() && message.size() == 1 && message.contains("raw") &&
      message["raw"].is_string()) {
    base.kind = MessageKind::kRaw;
    base.raw = message["raw"].get<std::string>();
    base.message = nullptr;
    out.push_back(std::move(base));
  } else if (message.is_array() && !message.empty()) {
    ++batches;
    for (const auto& item : message) {
      Record r = base;
      r.batch = batches;
      r.kind = message_kind(item);
      r.message = item;
      out.push_back(std::move(r));
    }
  } else {
    base.kind = message_kind(message);
    base.message = message;
    out.push_back(std::move(base));
  }
  return out;
}

}  // namespace

std::vector<std::string> Recording::sessions() const {
  std::vector<std::string> out;
  for (const auto& r : records)
    if (std::find(out.begin(), out.end(), r.session) == out.end()) out.push_back(r.session);
  return out;
}

MessageKind message_kind(const json& message) {
  if (!message.is_object()) return MessageKind::kInvalid;
  const bool has_id = message.contains("id");
  if (message.contains("method") && message["method"].is_string())
    return has_id ? MessageKind::kRequest : MessageKind::kNotification;
  if (has_id && !message.contains("method") &&
      (message.contains("result") || message.contains("error")))
    return MessageKind::kResponse;
  return MessageKind::kInvalid;
}

std::string describe(const Record& record) {
  switch (record.kind) {
    case MessageKind::kRaw:
      return "text that is not JSON";
    case MessageKind::kInvalid:
      return "an invalid message";
    case MessageKind::kResponse:
      return "a response";
    case MessageKind::kRequest:
    case MessageKind::kNotification:
      break;
  }
  std::string text = record.message["method"].get<std::string>();
  const json& params = record.message.contains("params") ? record.message["params"] : json();
  if (text == "tools/call" && params.is_object() && params["name"].is_string())
    text += " " + params["name"].get<std::string>();
  if (text == "resources/read" && params.is_object() && params["uri"].is_string())
    text += " " + params["uri"].get<std::string>();
  return text;
}

bool is_error_answer(const json& response) {
  if (!response.is_object()) return false;
  if (response.contains("error")) return true;
  return response.contains("result") && response["result"].is_object() &&
         response["result"].value("isError", false) == true;
}

Result<Recording> parse_recording(std::string_view text, const std::string& name, ReadMode mode) {
  Recording recording;
  recording.name = name;
  size_t line = 0, batches = 0, start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    const bool last_unterminated = end == std::string_view::npos;
    if (last_unterminated) end = text.size();
    std::string_view content = text.substr(start, end - start);
    start = end + 1;
    ++line;
    if (trim(content).empty()) continue;
    auto records = parse_line(content, line, batches);
    if (records) {
      for (auto& r : *records) recording.records.push_back(std::move(r));
      continue;
    }
    std::string where = name + ":" + std::to_string(line) + ": ";
    std::string what =
        last_unterminated
            ? where +
                  "the recording is cut short: its last line ends in the middle of a message "
                  "(the server stopped while writing it); delete that line to use the rest"
            : where + "the line " + records.error().message +
                  "; a recording holds one JSON object per line, as `kiln mcp --record` "
                  "writes";
    if (mode == ReadMode::kStrict) return make_error(what);
    recording.warnings.push_back(what);
  }
  Pairing pairing(recording, mode);
  if (auto paired = pairing.run(); !paired) return paired.error();
  return recording;
}

Result<Recording> read_recording(const std::filesystem::path& path, ReadMode mode) {
  auto text = read_file(path);
  if (!text)
    return make_error(text.error().message + "; pass a recording `kiln mcp --record` made");
  return parse_recording(*text, path.string(), mode);
}

}  // namespace kiln::replay
