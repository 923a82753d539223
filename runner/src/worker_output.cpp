#include "kiln/runner/worker_output.h"

namespace kiln::runner {

using json = nlohmann::json;

namespace {

constexpr size_t kMaxMessage = 4000;

std::string string_or(const json& event, const char* key, const std::string& fallback) {
  auto it = event.find(key);
  return it != event.end() && it->is_string() ? it->get<std::string>() : fallback;
}

}  // namespace

std::string clip(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  return std::string(text.substr(0, max)) + "…";
}

WorkerOutput::WorkerOutput(EventSink sink) : sink_(std::move(sink)) {}

bool WorkerOutput::fail(std::string problem) {
  if (problem_.empty()) problem_ = std::move(problem);
  return false;
}

bool WorkerOutput::add_line(std::string_view line) {
  if (!problem_.empty()) return false;
  ++lines_;
  if (line.find_first_not_of(" \t") == std::string_view::npos) return true;
  if (result_) {
    return fail("the worker wrote after its result line (line " + std::to_string(lines_) + ": '" +
                clip(line, 200) + "'); the result must be the last line");
  }
  json event = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!event.is_object() || !event.contains("event") || !event["event"].is_string()) {
    return fail("stdout line " + std::to_string(lines_) + " is not a JSON event: '" +
                clip(line, 200) + "' (the worker must print only protocol events on stdout)");
  }
  const std::string type = event["event"].get<std::string>();
  if (type == "result") {
    if (!event.contains("result") || !event["result"].is_object())
      return fail("the result line has no \"result\" object");
    result_ = std::move(event["result"]);
    return true;
  }
  if (type == "stage") {
    std::string stage = string_or(event, "stage", "");
    if (stage.empty() || stage.size() > 32)
      return fail("a stage event without a stage name (line " + std::to_string(lines_) + ")");
    last_stage_ = stage;
    sink_(json{{"event", "stage"}, {"stage", stage}});
    return true;
  }
  if (type == "progress") {
    json out{{"event", "progress"}};
    if (auto it = event.find("workload"); it != event.end() && it->is_string())
      out["workload"] = clip(it->get<std::string>(), 200);
    for (const char* key : {"index", "total"})
      if (auto it = event.find(key); it != event.end() && it->is_number_integer()) out[key] = *it;
    if (auto it = event.find("message"); it != event.end() && it->is_string())
      out["message"] = clip(it->get<std::string>(), kMaxMessage);
    sink_(std::move(out));
    return true;
  }
  if (type == "log") {
    std::string level = string_or(event, "level", "info");
    if (level != "info" && level != "warning" && level != "error") level = "info";
    sink_(json{{"event", "log"},
               {"level", level},
               {"message", clip(string_or(event, "message", ""), kMaxMessage)}});
    return true;
  }
  // An event this server does not know: kept as a note, so newer workers still run.
  sink_(json{{"event", "log"},
             {"level", "warning"},
             {"message", "unknown worker event '" + clip(type, 40) + "' ignored"}});
  return true;
}

}  // namespace kiln::runner
