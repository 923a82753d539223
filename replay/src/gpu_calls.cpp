#include "kiln/replay/gpu_calls.h"

#include <array>
#include <string_view>

namespace kiln::replay {

using json = nlohmann::json;

namespace {

const json& field(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::string text_field(const json& object, const char* key) {
  const json& value = field(object, key);
  return value.is_string() ? value.get<std::string>() : "";
}

}  // namespace

std::string answered_job_id(const Record* answer) {
  if (!answer) return "";
  return text_field(field(field(answer->message, "result"), "structuredContent"), "job_id");
}

bool needs_gpu(const Record& request, const Record* answer, const std::set<std::string>& gpu_jobs) {
  if (text_field(request.message, "method") != "tools/call") return false;
  const json& params = field(request.message, "params");
  const json& arguments = field(params, "arguments");
  const std::string tool = text_field(params, "name");
  static constexpr std::array<std::string_view, 3> kGpuTools = {"benchmark", "profile",
                                                                "record_candidate"};
  for (auto gpu : kGpuTools)
    if (tool == gpu) return true;
  const json& structured =
      answer ? field(field(answer->message, "result"), "structuredContent") : json();
  if ((tool == "synccheck" || tool == "racecheck") &&
      (text_field(arguments, "engine") == "gpu" || text_field(structured, "engine") == "gpu"))
    return true;
  if (tool == "wait_job" && gpu_jobs.count(text_field(arguments, "job_id"))) return true;
  return text_field(field(structured, "error"), "code") == "no_runner";
}

}  // namespace kiln::replay
