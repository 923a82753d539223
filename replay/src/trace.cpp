#include "kiln/replay/trace.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "kiln/base/json_text.h"
#include "kiln/base/text.h"

namespace kiln::replay {

using json = nlohmann::json;

namespace {

constexpr size_t kMessageBytes = 110;
constexpr size_t kArgumentBytes = 48;

const json& field(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::string first_line(std::string_view text) {
  text = trim(text);
  std::string_view line = text.substr(0, text.find('\n'));
  std::string out(utf8_prefix(line, kMessageBytes));
  if (out.size() < line.size()) out += "...";
  return out;
}

// One argument for a person: a source as its size, a long value cut (a path from the left,
// where its file name is).
std::string argument(const std::string& key, const json& value) {
  if (key == "source" && value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    return "source=<" + std::to_string(std::count(text.begin(), text.end(), '\n') + 1) + " lines>";
  }
  std::string text = value.is_string() ? value.get<std::string>() : json_text(value);
  if (text.size() > kArgumentBytes) {
    if (value.is_string() && text.find('/') != std::string::npos)
      text = "..." + text.substr(text.size() - kArgumentBytes + 3);
    else
      text = std::string(utf8_prefix(text, kArgumentBytes - 3)) + "...";
  }
  return key + "=" + text;
}

std::string arguments_of(const json& arguments) {
  if (!arguments.is_object() || arguments.empty()) return "";
  std::vector<std::string> parts;
  for (auto it = arguments.begin(); it != arguments.end(); ++it)
    parts.push_back(argument(it.key(), it.value()));
  return join(parts, " ");
}

std::string text_of(const json& result) {
  for (const auto& block :
       field(result, "content").is_array() ? field(result, "content") : json::array())
    if (field(block, "type") == "text" && field(block, "text").is_string())
      return block["text"].get<std::string>();
  return "";
}

void read_outcome(const json& response, TracedCall& call) {
  if (response.contains("error")) {
    const json& error = response["error"];
    call.outcome = CallOutcome::kRpcError;
    call.message =
        "error " + json_text(field(error, "code")) + ": " +
        first_line(field(error, "message").is_string() ? error["message"].get<std::string>()
                                                       : json_text(error));
    return;
  }
  const json& result = field(response, "result");
  const json& structured = field(result, "structuredContent");
  const std::string text = text_of(result);
  if (field(result, "isError") == true) {
    call.outcome = CallOutcome::kToolError;
    const json& message = field(field(structured, "error"), "message");
    call.message = first_line(message.is_string() ? message.get<std::string>() : text);
    return;
  }
  const bool failed = field(structured, "ok") == false || field(structured, "passed") == false ||
                      field(structured, "status") == "failed";
  call.outcome = failed ? CallOutcome::kFail : CallOutcome::kPass;
  call.message = first_line(text);
  for (const json* holder : {&field(structured, "summary"), &structured})
    if (field(*holder, "geomean_speedup").is_number()) {
      call.geomean = (*holder)["geomean_speedup"].get<double>();
      break;
    }
}

std::string clock_of(const std::string& ts) {
  // "2026-11-29T19:14:02.894Z" -> "19:14:02.894"
  if (ts.size() >= 20 && ts[10] == 'T') return ts.substr(11, ts.size() - 12);
  return ts.empty() ? "-" : ts;
}

std::string seconds_text(const std::optional<double>& seconds) {
  if (!seconds) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f s", *seconds);
  return buffer;
}

frontier::ToolCallStats& stats_for(Trace& trace, const std::string& tool) {
  for (auto& t : trace.tools)
    if (t.tool == tool) return t;
  trace.tools.push_back({});
  trace.tools.back().tool = tool;
  return trace.tools.back();
}

std::string pad(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

}  // namespace

const char* call_outcome_name(CallOutcome outcome) {
  switch (outcome) {
    case CallOutcome::kPass:
      return "pass";
    case CallOutcome::kFail:
      return "fail";
    case CallOutcome::kToolError:
      return "isError";
    case CallOutcome::kRpcError:
      return "error";
    case CallOutcome::kNoAnswer:
      return "no answer";
  }
  return "?";
}

Trace build_trace(const Recording& recording) {
  Trace trace;
  trace.recording = recording.name;
  trace.warnings = recording.warnings;
  for (const Record& r : recording.records) {
    if (r.ts_ms > 0) {
      if (trace.first_ms == 0 || r.ts_ms < trace.first_ms) trace.first_ms = r.ts_ms;
      trace.last_ms = std::max(trace.last_ms, r.ts_ms);
    }
    if (!r.incoming || r.kind != MessageKind::kRequest) continue;
    const std::string method = r.message["method"].get<std::string>();
    if (method == "initialize" || method == "server/discover") ++trace.sessions;
    const json& params = field(r.message, "params");
    if (method != "tools/call" || !field(params, "name").is_string()) {
      ++trace.other_requests;
      continue;
    }
    TracedCall call;
    call.line = r.line;
    call.session = r.session;
    call.tool = params["name"].get<std::string>();
    call.arguments = arguments_of(field(params, "arguments"));
    call.ts = r.ts;
    frontier::ToolCallStats& stats = stats_for(trace, call.tool);
    ++stats.calls;
    if (r.answer) {
      const Record& answer = recording.records[*r.answer];
      read_outcome(answer.message, call);
      if (answer.ts_ms > 0 && r.ts_ms > 0 && answer.ts_ms >= r.ts_ms) {
        call.seconds = static_cast<double>(answer.ts_ms - r.ts_ms) / 1000.0;
        stats.total_s += *call.seconds;
        stats.max_s = std::max(stats.max_s, *call.seconds);
      }
      if (call.outcome == CallOutcome::kToolError || call.outcome == CallOutcome::kRpcError)
        ++stats.errors;
    } else {
      call.message = "no answer recorded (cancelled, or the session ended first)";
      ++stats.unanswered;
    }
    trace.calls.push_back(std::move(call));
  }
  std::stable_sort(trace.tools.begin(), trace.tools.end(),
                   [](const frontier::ToolCallStats& a, const frontier::ToolCallStats& b) {
                     return a.calls != b.calls ? a.calls > b.calls : a.tool < b.tool;
                   });
  return trace;
}

std::string format_trace(const Trace& trace, size_t longest) {
  std::ostringstream out;
  out << trace.recording << ": " << trace.calls.size() << " tool call(s), " << trace.other_requests
      << " other request(s), " << trace.sessions << " session(s)";
  if (trace.first_ms > 0)
    out << ", " << seconds_text(static_cast<double>(trace.last_ms - trace.first_ms) / 1000.0)
        << " recorded";
  out << "\n";
  for (const auto& warning : trace.warnings) out << "warning: " << warning << "\n";
  if (!trace.calls.empty()) out << "\n";
  for (const auto& call : trace.calls) {
    out << pad(clock_of(call.ts), 13) << " " << pad(call.tool, 16) << " "
        << pad(seconds_text(call.seconds), 9) << " " << pad(call_outcome_name(call.outcome), 8);
    if (call.geomean) {
      char buffer[48];
      std::snprintf(buffer, sizeof buffer, " geomean %.3fx", *call.geomean);
      out << buffer;
    }
    out << "  line " << call.line << "\n";
    if (!call.arguments.empty()) out << "    " << call.arguments << "\n";
    if (!call.message.empty()) out << "    " << call.message << "\n";
  }
  if (!trace.tools.empty()) {
    out << "\nper tool: calls, errors, unanswered, total, longest\n";
    for (const auto& t : trace.tools)
      out << "  " << pad(t.tool, 18) << pad(std::to_string(t.calls), 6)
          << pad(std::to_string(t.errors), 7) << pad(std::to_string(t.unanswered), 5)
          << pad(seconds_text(t.total_s), 11) << seconds_text(t.max_s) << "\n";
  }
  std::vector<const TracedCall*> timed;
  for (const auto& call : trace.calls)
    if (call.seconds) timed.push_back(&call);
  std::stable_sort(timed.begin(), timed.end(), [](const TracedCall* a, const TracedCall* b) {
    return *a->seconds > *b->seconds;
  });
  if (timed.size() > longest) timed.resize(longest);
  if (!timed.empty()) {
    out << "\nlongest calls:\n";
    for (const TracedCall* call : timed)
      out << "  " << pad(seconds_text(call->seconds), 10) << pad(call->tool, 16) << " line "
          << call->line << (call->arguments.empty() ? "" : "  " + call->arguments) << "\n";
  }
  return out.str();
}

json trace_json(const Trace& trace) {
  json calls = json::array();
  for (const auto& c : trace.calls) {
    json item{{"line", c.line},
              {"tool", c.tool},
              {"arguments", c.arguments},
              {"ts", c.ts},
              {"outcome", call_outcome_name(c.outcome)},
              {"message", c.message}};
    if (!c.session.empty()) item["session"] = c.session;
    if (c.seconds) item["seconds"] = *c.seconds;
    if (c.geomean) item["geomean"] = *c.geomean;
    calls.push_back(std::move(item));
  }
  json tools = json::array();
  for (const auto& t : trace.tools)
    tools.push_back({{"tool", t.tool},
                     {"calls", t.calls},
                     {"errors", t.errors},
                     {"unanswered", t.unanswered},
                     {"total_s", t.total_s},
                     {"max_s", t.max_s}});
  return json{{"recording", trace.recording},
              {"sessions", trace.sessions},
              {"other_requests", trace.other_requests},
              {"calls", calls},
              {"tools", tools},
              {"warnings", trace.warnings}};
}

}  // namespace kiln::replay
