#include "kiln/replay/replayer.h"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>

#include "kiln/base/json_text.h"
#include "kiln/replay/id_map.h"

namespace kiln::replay {

using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

bool usable_id(const json& message) {
  if (!message.is_object() || !message.contains("id")) return false;
  return message["id"].is_string() || message["id"].is_number_integer();
}

std::string tool_of(const Record& r) {
  if (r.kind != MessageKind::kRequest || r.message.value("method", "") != "tools/call") return "";
  const json& params = r.message.contains("params") ? r.message["params"] : json();
  return params.is_object() && params.contains("name") && params["name"].is_string()
             ? params["name"].get<std::string>()
             : "";
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
    text.replace(at, from.size(), to);
}

void map_strings(json& value, const std::vector<std::pair<std::string, std::string>>& map) {
  if (value.is_string()) {
    for (const auto& [from, to] : map) replace_all(value.get_ref<std::string&>(), from, to);
  } else if (value.is_structured()) {
    for (auto& item : value) map_strings(item, map);
  }
}

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// One recorded session, replayed on one connection.
class SessionReplay {
 public:
  SessionReplay(const Recording& recording, std::vector<size_t> records, Connection& connection,
                const ReplayOptions& options, ReplayReport& report)
      : rec_(recording.records),
        mine_(std::move(records)),
        conn_(connection),
        options_(options),
        report_(report) {}

  void run() {
    for (size_t n = 0; n < mine_.size(); ++n) {
      const size_t i = mine_[n];
      const Record& r = rec_[i];
      if (!r.incoming) {
        expect(i);
        continue;
      }
      if (r.batch != 0) {
        size_t end = n;
        while (end + 1 < mine_.size() && rec_[mine_[end + 1]].batch == r.batch) ++end;
        send_batch(n, end);
        n = end;
        continue;
      }
      send_one(i);
    }
    // Late answers to what the recording left unanswered (a cancelled call) still count.
    while (!dead_ && pump(Clock::now() + 200ms)) {
    }
    conn_.finish();
    while (auto late = conn_.receive(Clock::now())) dispatch(*late);
    decide();
  }

 private:
  // ---- what the recording says came back: wait for its live counterpart
  void expect(size_t i) {
    const Record& r = rec_[i];
    if (r.kind == MessageKind::kResponse && r.answers && rec_[*r.answers].incoming) {
      const size_t j = *r.answers;
      if (!sent_at_.count(j)) return;  // skipped, or could not be sent
      const bool by_id = usable_id(rec_[j].message) && usable_id(r.message);
      wait_until([&] { return answers_.count(j) > 0 || (!by_id && take_orphan(j)); });
      return;
    }
    if (r.kind == MessageKind::kRequest && usable_id(r.message))
      wait_until([&] { return matched_server_.count(i) > 0; });
  }

  bool take_orphan(size_t j) {
    if (orphans_.empty()) return false;
    answer(j, std::move(orphans_.front()));
    orphans_.pop_front();
    return true;
  }

  template <typename Done>
  void wait_until(Done done) {
    const auto deadline = Clock::now() + options_.answer_timeout;
    while (!done() && !dead_ && Clock::now() < deadline) pump(deadline);
  }

  // ---- the server's messages
  bool pump(Clock::time_point deadline) {
    auto message = conn_.receive(deadline);
    if (!message) {
      if (std::string why = conn_.closed(); !why.empty()) {
        dead_ = true;
        dead_reason_ = why;
      }
      return false;
    }
    dispatch(*message);
    return true;
  }

  void dispatch(const json& message) {
    if (message.is_array()) {
      for (const auto& item : message) dispatch(item);
      return;
    }
    switch (message_kind(message)) {
      case MessageKind::kResponse:
        if (usable_id(message)) {
          if (auto answered = ids_.client_answer(message["id"])) {
            json copy = message;
            copy["id"] = answered->recorded;  // compared as the recording has it
            answer(answered->ticket, std::move(copy));
            return;
          }
        }
        orphans_.push_back(message);
        return;
      case MessageKind::kRequest:
        server_asks(message);
        return;
      case MessageKind::kNotification:  // progress and logs: timing, not answers
        return;
      default:
        if (stray_.size() < 5)
          stray_.push_back(message.is_string() ? message.get<std::string>() : json_text(message));
        return;
    }
  }

  void answer(size_t j, json message) {
    if (answers_.count(j)) return;
    // A GPU job the replay started has an id of its own: later calls naming the recorded one
    // (wait_job) name it instead.
    if (gpu_replayed_.count(j) && rec_[j].answer) {
      const std::string recorded = answered_job_id(&rec_[*rec_[j].answer]);
      const json& result = message.contains("result") ? message["result"] : json();
      const json& structured = result.is_object() && result.contains("structuredContent")
                                   ? result["structuredContent"]
                                   : json();
      if (!recorded.empty() && structured.is_object() && structured.contains("job_id") &&
          structured["job_id"].is_string())
        live_jobs_[recorded] = structured["job_id"].get<std::string>();
    }
    answers_[j] = std::move(message);
    if (auto at = sent_at_.find(j); at != sent_at_.end())
      seconds_[j] = seconds_between(at->second, Clock::now());
  }

  // The live server's request k of a method is the recording's request k of that method.
  void server_asks(const json& message) {
    const std::string method = message["method"].get<std::string>();
    for (size_t i : mine_) {
      const Record& r = rec_[i];
      if (r.incoming || r.kind != MessageKind::kRequest || matched_server_.count(i) ||
          r.message.value("method", "") != method || !usable_id(r.message))
        continue;
      matched_server_.insert(i);
      ids_.server_request(r.message["id"], message["id"]);
      return;
    }
    // Nothing recorded to answer with: answer as a client without those capabilities would.
    json reply{{"jsonrpc", "2.0"}, {"id", message["id"]}};
    if (method == "ping")
      reply["result"] = json::object();
    else if (method == "roots/list")
      reply["result"] = {{"roots", json::array()}};
    else
      reply["error"] = {{"code", -32601},
                        {"message", "kiln replay: the recording has no answer to " + method}};
    report_.notes.push_back("the server sent " + method +
                            ", which the recording does not have; kiln replay answered it");
    (void)conn_.send(reply);
  }

  // ---- the client's messages
  void send_one(size_t i) {
    const Record& r = rec_[i];
    if (r.kind == MessageKind::kRaw) {
      mark_sent(i);
      if (auto sent = conn_.send_raw(r.raw); !sent) lost(sent.error().message);
      return;
    }
    auto message = prepare(i);
    if (!message) return;
    if (auto sent = conn_.send(*message); !sent) lost(sent.error().message);
  }

  void send_batch(size_t first, size_t last) {
    json batch = json::array();
    for (size_t n = first; n <= last; ++n)
      if (auto message = prepare(mine_[n])) batch.push_back(std::move(*message));
    if (batch.empty()) return;
    if (auto sent = conn_.send(batch); !sent) lost(sent.error().message);
  }

  void lost(const std::string& why) {
    if (dead_) return;
    dead_ = true;
    std::string closed = conn_.closed();
    dead_reason_ = closed.empty() ? why : closed;
  }

  void mark_sent(size_t i) { sent_at_[i] = Clock::now(); }

  void skip(size_t i, Outcome outcome, std::string why) { skipped_[i] = {outcome, std::move(why)}; }

  // The message to send for record i, its ids mapped; nullopt when it is not sent.
  std::optional<json> prepare(size_t i) {
    const Record& r = rec_[i];
    json message = r.message;
    switch (r.kind) {
      case MessageKind::kRequest: {
        const Record* recorded = r.answer ? &rec_[*r.answer] : nullptr;
        const std::string tool = tool_of(r);
        const bool gpu = needs_gpu(r, recorded, gpu_jobs_);
        if (gpu) {
          if (std::string job = answered_job_id(recorded); !job.empty()) gpu_jobs_.insert(job);
          if (!options_.gpu) {
            skip(i, Outcome::kNoGpu, "set KILN_RUNNER to replay it on a GPU runner");
            return std::nullopt;
          }
        }
        if (!tool.empty() && !options_.only.empty() &&
            std::find(options_.only.begin(), options_.only.end(), tool) == options_.only.end()) {
          skip(i, Outcome::kSkipped, "not in --only");
          return std::nullopt;
        }
        if (gpu) {
          gpu_replayed_.insert(i);
          live_job_ids(message);
        }
        if (usable_id(message)) message["id"] = ids_.client_request(message["id"], i);
        mark_sent(i);
        return message;
      }
      case MessageKind::kNotification:
        return cancellation(message);
      case MessageKind::kResponse:
        return client_answer(i, std::move(message));
      default:
        mark_sent(i);
        return message;
    }
  }

  // A GPU call's `job_id` argument (wait_job) names the job the replay started in its place.
  void live_job_ids(json& message) {
    if (!message.contains("params") || !message["params"].is_object()) return;
    json& params = message["params"];
    if (!params.contains("arguments") || !params["arguments"].is_object()) return;
    json& arguments = params["arguments"];
    if (!arguments.contains("job_id") || !arguments["job_id"].is_string()) return;
    if (auto live = live_jobs_.find(arguments["job_id"].get<std::string>());
        live != live_jobs_.end())
      arguments["job_id"] = live->second;
  }

  // A cancellation names the live id of its request, and is not sent for a request that was not.
  std::optional<json> cancellation(json message) {
    if (message["method"] != "notifications/cancelled" || !message.contains("params") ||
        !message["params"].is_object() || !message["params"].contains("requestId"))
      return message;
    auto live = ids_.live_client_id(message["params"]["requestId"]);
    if (!live) return std::nullopt;  // skipped, or already answered: nothing to cancel
    message["params"]["requestId"] = *live;
    return message;
  }

  std::optional<json> client_answer(size_t i, json message) {
    const Record& r = rec_[i];
    if (!r.answers || !usable_id(message)) return message;
    const size_t asked = *r.answers;
    wait_until([&] { return matched_server_.count(asked) > 0; });
    auto live = ids_.server_answer(message["id"]);
    if (!live) {
      skip(i, Outcome::kSkipped,
           "the server did not send " + rec_[asked].message.value("method", std::string("it")) +
               " this time, so the recorded answer was not sent");
      return std::nullopt;
    }
    message["id"] = *live;
    return message;
  }

  // ---- the verdicts
  void decide() {
    for (size_t i : mine_) {
      const Record& r = rec_[i];
      if (!r.incoming) continue;
      const bool answered_kind = r.kind == MessageKind::kRequest ||
                                 r.kind == MessageKind::kInvalid || r.kind == MessageKind::kRaw;
      if (!answered_kind && !r.answer && !skipped_.count(i)) continue;
      report_.verdicts.push_back(verdict(i));
      if (options_.on_verdict) options_.on_verdict(report_.verdicts.back());
    }
    if (!stray_.empty())
      report_.notes.push_back("the server wrote what is not JSON-RPC, e.g. " + stray_.front());
    if (!orphans_.empty())
      report_.notes.push_back(std::to_string(orphans_.size()) +
                              " answer(s) from the server matched no message sent, e.g. " +
                              json_text(orphans_.front()));
  }

  Verdict verdict(size_t i) {
    const Record& r = rec_[i];
    Verdict v;
    v.line = r.line;
    v.session = r.session;
    v.what = describe(r);
    if (auto s = skipped_.find(i); s != skipped_.end()) {
      v.outcome = s->second.first;
      v.note = s->second.second;
      return v;
    }
    const Record* recorded = r.answer ? &rec_[*r.answer] : nullptr;
    if (recorded && recorded->ts_ms > 0 && r.ts_ms > 0)
      v.recorded_seconds = static_cast<double>(recorded->ts_ms - r.ts_ms) / 1000.0;
    if (auto s = seconds_.find(i); s != seconds_.end()) v.seconds = s->second;
    auto live = answers_.find(i);
    if (!recorded && live == answers_.end()) {
      v.note = "no answer, as in the recording";
      return v;
    }
    if (live == answers_.end()) {
      v.outcome = is_error_answer(recorded->message) ? Outcome::kDiffers : Outcome::kNewError;
      v.note = dead_ ? "no answer: " + dead_reason_
                     : "no answer within " + std::to_string(options_.answer_timeout.count()) + " s";
      v.differences.push_back({"", recorded->message, std::nullopt});
      return v;
    }
    if (!recorded) {
      v.outcome = Outcome::kDiffers;
      v.note = "answered, where the recording has no answer";
      v.differences.push_back({"", std::nullopt, live->second});
      return v;
    }
    // A GPU call measured again: its numbers differ by nature, its verdict must not.
    const bool measured = gpu_replayed_.count(i) > 0;
    if (measured) v.note = "replayed on the runner; measured numbers not compared";
    v.differences = diff_json(recorded->message, live->second, options_.ignore, 50, &v.truncated,
                              measured ? Compare::kVerdictsOnly : Compare::kEverything);
    if (v.differences.empty()) return v;
    const bool new_error = !is_error_answer(recorded->message) && is_error_answer(live->second);
    v.outcome = new_error ? Outcome::kNewError : Outcome::kDiffers;
    return v;
  }

  const std::vector<Record>& rec_;
  std::vector<size_t> mine_;
  Connection& conn_;
  const ReplayOptions& options_;
  ReplayReport& report_;

  IdMap ids_;
  std::map<size_t, Clock::time_point> sent_at_;
  std::map<size_t, json> answers_;
  std::map<size_t, double> seconds_;
  std::deque<json> orphans_;
  std::set<size_t> matched_server_;  // recorded server requests the live server sent
  std::map<size_t, std::pair<Outcome, std::string>> skipped_;
  std::set<std::string> gpu_jobs_;
  std::set<size_t> gpu_replayed_;                 // GPU calls sent to a runner
  std::map<std::string, std::string> live_jobs_;  // recorded job id -> the replay's
  std::vector<std::string> stray_;
  bool dead_ = false;
  std::string dead_reason_;
};

}  // namespace

Result<ReplayReport> replay_recording(const Recording& recording, const ReplayOptions& options,
                                      const ConnectionFactory& connect) {
  ReplayReport report;
  report.recording = recording.name;
  const auto start = Clock::now();
  Recording mapped;
  if (!options.map.empty()) {
    mapped = recording;
    for (auto& r : mapped.records) {
      map_strings(r.message, options.map);
      for (const auto& [from, to] : options.map) replace_all(r.raw, from, to);
    }
  }
  const Recording& replayed = options.map.empty() ? recording : mapped;
  for (const std::string& session : replayed.sessions()) {
    std::vector<size_t> records;
    for (size_t i = 0; i < replayed.records.size(); ++i)
      if (replayed.records[i].session == session) records.push_back(i);
    auto connection = connect();
    if (!connection) return connection.error();
    SessionReplay(replayed, std::move(records), **connection, options, report).run();
  }
  report.seconds = seconds_between(start, Clock::now());
  return report;
}

}  // namespace kiln::replay
