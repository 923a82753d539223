#include "kiln/worker/job_spec.h"

#include <nlohmann/json.hpp>

#include "kiln/base/file.h"

namespace kiln::worker {

namespace {

struct FieldError {
  std::string message;
};

std::string string_field(const nlohmann::json& j, const char* key, bool required) {
  if (!j.contains(key)) {
    if (required) throw FieldError{std::string(key) + ": missing; the server must set it"};
    return {};
  }
  if (!j[key].is_string()) throw FieldError{std::string(key) + ": must be a string"};
  return j[key].get<std::string>();
}

double number_field(const nlohmann::json& j, const std::string& path, const char* key,
                    double fallback, double minimum) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_number()) throw FieldError{path + key + ": must be a number"};
  const double value = j[key].get<double>();
  if (!(value >= minimum)) throw FieldError{path + key + ": must be >= " + std::to_string(minimum)};
  return value;
}

}  // namespace

const char* job_kind_name(JobKind kind) {
  switch (kind) {
    case JobKind::kVerify:
      return "verify";
    case JobKind::kBenchmark:
      return "benchmark";
    case JobKind::kProfile:
      return "profile";
    case JobKind::kSanitize:
      return "sanitize";
  }
  return "?";
}

Result<JobSpec> JobSpec::parse(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error("job.json: not a JSON object");
  JobSpec spec;
  try {
    spec.id = string_field(j, "id", false);
    const std::string kind = string_field(j, "kind", true);
    if (kind == "verify") {
      spec.kind = JobKind::kVerify;
    } else if (kind == "benchmark") {
      spec.kind = JobKind::kBenchmark;
    } else if (kind == "profile") {
      spec.kind = JobKind::kProfile;
    } else if (kind == "sanitize") {
      spec.kind = JobKind::kSanitize;
    } else {
      throw FieldError{"kind: \"" + kind + "\" is not one of verify, benchmark, profile, sanitize"};
    }
    spec.task_dir = string_field(j, "task_dir", true);
    spec.candidate = string_field(j, "candidate", true);
    spec.build_dir = string_field(j, "build_dir", true);
    if (j.contains("workloads")) {
      if (!j["workloads"].is_array())
        throw FieldError{"workloads: must be an array of workload names"};
      for (const auto& w : j["workloads"]) {
        if (!w.is_string()) throw FieldError{"workloads: every entry must be a string"};
        spec.workloads.push_back(w.get<std::string>());
      }
    }
    if (j.contains("seed")) {
      const auto& seed = j["seed"];
      if (seed.is_number_unsigned()) {
        spec.seed = seed.get<uint64_t>();
      } else if (seed.is_number_integer()) {
        spec.seed = static_cast<uint64_t>(seed.get<int64_t>());
      } else if (seed.is_string()) {
        spec.seed = std::stoull(seed.get<std::string>());
      } else {
        throw FieldError{"seed: must be an integer"};
      }
    } else {
      throw FieldError{"seed: missing; the server must draw a fresh hidden seed per job"};
    }
    if (j.contains("limits")) {
      const auto& l = j["limits"];
      if (!l.is_object()) throw FieldError{"limits: must be an object"};
      spec.limits.job_seconds =
          number_field(l, "limits.", "job_seconds", spec.limits.job_seconds, 1);
      spec.limits.min_samples =
          static_cast<int64_t>(number_field(l, "limits.", "min_samples", 10, 1));
      spec.limits.max_samples =
          static_cast<int64_t>(number_field(l, "limits.", "max_samples", 200, 1));
      spec.limits.target_rel_noise = number_field(l, "limits.", "target_rel_noise", 0.005, 0);
      spec.limits.sample_time_cap_seconds = number_field(l, "limits.", "sample_time_cap_seconds",
                                                         spec.limits.sample_time_cap_seconds, 0);
      if (spec.limits.max_samples < spec.limits.min_samples) {
        throw FieldError{"limits.max_samples: must be >= limits.min_samples"};
      }
    }
    if (j.contains("profile")) {
      if (!j["profile"].is_object()) throw FieldError{"profile: must be an object"};
      spec.profile_workload = string_field(j["profile"], "workload", false);
    }
    if (j.contains("sanitize")) {
      const auto& s = j["sanitize"];
      if (!s.is_object()) throw FieldError{"sanitize: must be an object"};
      if (s.contains("tools")) {
        if (!s["tools"].is_array()) throw FieldError{"sanitize.tools: must be an array"};
        for (const auto& t : s["tools"]) {
          const std::string tool = t.is_string() ? t.get<std::string>() : "";
          if (tool != "memcheck" && tool != "racecheck" && tool != "synccheck" &&
              tool != "initcheck") {
            throw FieldError{"sanitize.tools: \"" + tool +
                             "\" is not memcheck, racecheck, synccheck or initcheck"};
          }
          spec.sanitize_tools.push_back(tool);
        }
      }
      spec.sanitize_workload = string_field(s, "workload", false);
    }
    if (spec.kind == JobKind::kSanitize && spec.sanitize_tools.empty()) {
      spec.sanitize_tools = {"memcheck", "racecheck", "synccheck", "initcheck"};
    }
  } catch (const FieldError& e) {
    return make_error("job.json: " + e.message);
  } catch (const std::exception& e) {
    return make_error(std::string("job.json: ") + e.what());
  }
  return spec;
}

Result<JobSpec> JobSpec::load(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) return text.error();
  return parse(*text);
}

}  // namespace kiln::worker
