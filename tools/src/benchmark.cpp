// benchmark: correctness gates and timing of a candidate against the task's baseline
// on a GPU runner; every result is stored and named by a result id.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "kiln/tools/task_source.h"
#include "kiln/tools/tool_factories.h"

namespace kiln::tools {

using json = nlohmann::json;

namespace {

constexpr size_t kMaxRows = 64;  // the text stays far under 10 KB
constexpr size_t kMaxLogChars = 1500;

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

// A number from the RESULT, or "-" when absent.
std::string number(const json& object, const char* key, const char* pattern) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return "-";
  return format(pattern, object[key].get<double>());
}

std::string pad(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string rpad(const std::string& text, size_t width) {
  return text.size() < width ? std::string(width - text.size(), ' ') + text : text;
}

std::string error_stats(const json& row) {
  const json errors = row.value("errors", json::object());
  std::string out = "max_abs " + number(errors, "max_abs", "%.3g") + " max_rel " +
                    number(errors, "max_rel", "%.3g") + " mismatches " +
                    number(errors, "mismatches", "%.0f");
  if (errors.value("nan", 0) || errors.value("inf", 0))
    out +=
        " (nan " + number(errors, "nan", "%.0f") + ", inf " + number(errors, "inf", "%.0f") + ")";
  if (errors.contains("first_mismatches") && errors["first_mismatches"].is_array() &&
      !errors["first_mismatches"].empty()) {
    const json& first = errors["first_mismatches"][0];
    out += "; first at " + first.value("index", json::array()).dump() + " expected " +
           first.value("expected", json()).dump() + " got " + first.value("actual", json()).dump();
  }
  return out;
}

std::string gpu_line(const json& gpu) {
  if (!gpu.is_object()) return "";
  std::string out =
      "GPU " + gpu.value("name", std::string("?")) + " #" + number(gpu, "index", "%.0f");
  if (gpu.contains("driver")) out += ", driver " + gpu.value("driver", std::string());
  if (gpu.contains("cuda")) out += ", CUDA " + gpu.value("cuda", std::string());
  if (gpu.contains("sm_clock_mhz") && gpu["sm_clock_mhz"].is_object()) {
    const json& clock = gpu["sm_clock_mhz"];
    out += ", SM clock " + number(clock, "median", "%.0f") + " MHz (" +
           number(clock, "min", "%.0f") + "-" + number(clock, "max", "%.0f") + ")";
  }
  if (gpu.value("samples_discarded_throttled", 0) > 0)
    out +=
        ", " + number(gpu, "samples_discarded_throttled", "%.0f") + " throttled samples discarded";
  return out + "\n";
}

std::string summary_text(const json& result, const std::string& result_id, const std::string& job,
                         const std::string& runner) {
  std::ostringstream out;
  const std::string status = result.value("status", "error");
  const json summary = result.value("summary", json::object());
  out << "benchmark " << (result_id.empty() ? "(not stored)" : result_id) << " (job " << job
      << ", runner " << runner << "): ";
  if (status == "error") {
    out << "ERROR in stage " << result.value("stage", "?") << "\n"
        << result.value("error", "") << "\n";
  } else {
    out << (status == "passed" ? "PASSED " : "FAILED ") << number(summary, "passed", "%.0f") << "/"
        << number(summary, "total", "%.0f") << " workloads";
    if (summary.contains("geomean_speedup") && summary["geomean_speedup"].is_number())
      out << ", geomean speedup " << number(summary, "geomean_speedup", "%.3f") << "x";
    out << (summary.value("scored", false) ? ", scored" : ", not scored") << "\n";
    if (status != "passed" && result.contains("error")) out << result.value("error", "") << "\n";
  }
  const json task = result.value("task", json::object());
  out << "task " << task.value("name", "?") << " sha256 " << task.value("sha256", "").substr(0, 12)
      << "…, candidate " << result.value("candidate_sha256", "").substr(0, 12) << "…\n";
  out << gpu_line(result.value("gpu", json()));
  if (result.contains("build") && result["build"].is_object()) {
    const json& build = result["build"];
    out << "build " << number(build, "seconds", "%.1f") << " s, "
        << number(build, "registers", "%.0f") << " registers, " << number(build, "spills", "%.0f")
        << " spill bytes\n";
  }
  return out.str();
}

// Every gate with its state: "gates: 10/11 passed, 1 not run", then one line per gate that did
// not pass (failed, or not run and why), so a result never reads as fully gated when it is not.
std::string gates_text(const json& result) {
  if (!result.contains("gates") || !result["gates"].is_array() || result["gates"].empty())
    return "";
  std::ostringstream out;
  size_t passed = 0, failed = 0, not_run = 0;
  std::ostringstream lines;
  for (const auto& gate : result["gates"]) {
    const bool ok = gate.value("passed", false);
    const std::string state = gate.value("state", ok ? "passed" : "failed");
    const std::string detail = gate.value("detail", "");
    if (state == "passed") {
      ++passed;
      continue;
    }
    (state == "not_run" ? not_run : failed) += 1;
    lines << "  gate " << gate.value("name", "?") << (state == "not_run" ? " NOT RUN" : " FAILED")
          << (detail.empty() ? "" : ": " + detail) << "\n";
  }
  out << "gates: " << passed << "/" << result["gates"].size() << " passed";
  if (failed > 0) out << ", " << failed << " failed";
  if (not_run > 0) out << ", " << not_run << " not run (the result cannot be scored)";
  out << "\n" << lines.str();
  return out.str();
}

std::string rows_text(const json& result) {
  if (!result.contains("workloads") || !result["workloads"].is_array() ||
      result["workloads"].empty())
    return "";
  std::ostringstream out;
  out << pad("workload", 20) << " result " << rpad("median_us", 10) << rpad("p5_us", 10)
      << rpad("p95_us", 10) << rpad("cv%", 7) << rpad("n", 5) << rpad("base_us", 10)
      << rpad("speedup", 9) << rpad("TFLOP/s", 9) << rpad("%peak", 7) << "\n";
  size_t shown = 0;
  for (const auto& row : result["workloads"]) {
    if (++shown > kMaxRows) {
      out << "… " << result["workloads"].size() - kMaxRows << " more rows in structuredContent\n";
      break;
    }
    out << pad(row.value("name", "?"), 20) << " ";
    if (!row.value("passed", false)) {
      out << "FAIL   " << error_stats(row) << "\n";
      continue;
    }
    const json time = row.value("time_us", json::object());
    const json base = row.value("baseline_time_us", json::object());
    json cv = time.contains("cv") && time["cv"].is_number() ? json(time["cv"].get<double>() * 100)
                                                            : json();
    out << "PASS   " << rpad(number(time, "median", "%.2f"), 10)
        << rpad(number(time, "p5", "%.2f"), 10) << rpad(number(time, "p95", "%.2f"), 10)
        << rpad(number(json{{"cv", cv}}, "cv", "%.2f"), 7)
        << rpad(number(time, "samples", "%.0f"), 5) << rpad(number(base, "median", "%.2f"), 10)
        << rpad(number(row, "speedup", "%.3f") + "x", 9) << rpad(number(row, "tflops", "%.1f"), 9)
        << rpad(number(row, "pct_of_peak", "%.1f"), 7) << "\n";
  }
  return out.str();
}

std::string next_step(const json& result, const std::string& result_id, bool subset) {
  const std::string status = result.value("status", "error");
  if (status == "passed" && result.value("summary", json::object()).value("scored", false))
    return "next: record_candidate with result_id " + result_id + " puts it on the frontier\n";
  const json summary = result.value("summary", json::object());
  if (status == "passed" && summary.contains("unscored_gates") &&
      summary["unscored_gates"].is_array() && !summary["unscored_gates"].empty())
    return "next: not scored because a gate could not run (" +
           summary["unscored_gates"][0].get<std::string>() +
           "); that is the GPU machine's instruments, not the candidate: fix them and benchmark "
           "again\n";
  if (status == "passed" && subset)
    return "next: benchmark without `workloads` for a scored result\n";
  if (status == "failed")
    return "next: reproduce the failing workload with simulate on the sim_workloads, fix, "
           "benchmark again\n";
  if (result.value("stage", "") == "build")
    return "next: fix the build errors (compile shows them with source lines), then benchmark "
           "again\n";
  return "";
}

}  // namespace

mcp::Tool make_benchmark_tool(std::shared_ptr<GpuJobs> jobs) {
  mcp::Tool tool;
  tool.name = "benchmark";
  tool.title = "Benchmark a candidate on a GPU";
  tool.description =
      "Build the candidate kernel.cu on a GPU runner, check it against the integrity gates "
      "(poisoned outputs, fresh "
      "inputs, input checksums, guard bands, determinism, hidden stream work, CUDA errors, banned "
      "symbols) and the "
      "reference on every workload, then time it against the task's baseline (cold L2, "
      "interleaved). Returns per-workload "
      "PASS/FAIL with error stats, median/p5/p95/cv, speedup, TFLOP/s and % of peak, the geomean "
      "speedup, and a result "
      "id for record_candidate. Takes minutes; reports progress. Pass `candidate` (a kernel.cu "
      "path) or `source` (the code). `workloads` limits the run to a subset (quicker, but not "
      "scored). Check with "
      "compile and simulate first.";
  tool.input_schema =
      json{{"type", "object"},
           {"properties",
            {{"workloads",
              {{"type", "array"},
               {"items", {{"type", "string"}}},
               {"description", "workload names to run; default all (needed for a score)"}}},
             {"task",
              {{"type", "string"},
               {"pattern", kTaskNamePattern},
               {"description", "task name; default: this run's task"}}}}},
           {"additionalProperties", false}};
  add_candidate_properties(tool.input_schema, LegacyPath::kRefused);
  tool.output_schema = job_output_schema({{"task", {{"type", "object"}}},
                                          {"candidate_sha256", {{"type", "string"}}},
                                          {"gpu", {{"type", "object"}}},
                                          {"build", {{"type", "object"}}},
                                          {"gates", {{"type", "array"}}},
                                          {"workloads", {{"type", "array"}}},
                                          {"summary", {{"type", "object"}}}});
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = false, .open_world = true};
  tool.handler = [jobs](const json& arguments, mcp::CallContext& context) {
    auto task = jobs->runner_task(arguments.value("task", ""), "benchmark");
    if (!task) return mcp::ToolResult::error(mcp::ErrorCode::kNotFound, task.error().message);
    auto candidate = jobs->candidate(arguments);
    if (!candidate)
      return mcp::ToolResult::error(mcp::ErrorCode::kInvalidArguments, candidate.error().message);
    runner::JobSpec spec;
    spec.kind = runner::JobKind::kBenchmark;
    spec.candidate_source = candidate->source;
    if (arguments.contains("workloads"))
      spec.workloads = arguments["workloads"].get<std::vector<std::string>>();
    for (const auto& name : spec.workloads) {
      bool known = false;
      for (const auto& workload : (*task)->workloads) known = known || workload.name == name;
      if (!known) {
        std::string names;
        for (const auto& workload : (*task)->workloads)
          names += (names.empty() ? "" : ", ") + workload.name;
        return mcp::ToolResult::error(mcp::ErrorCode::kNotFound,
                                      "`" + name + "` is not a workload of " + (*task)->name +
                                          "; the workloads are " + names);
      }
    }
    size_t total = spec.workloads.empty() ? (*task)->workloads.size() : spec.workloads.size();
    auto job = jobs->run(**task, spec, *candidate, context, total);
    if (!job) return mcp::ToolResult::error(mcp::ErrorCode::kNoRunner, job.error().message);
    const std::string next = next_step(job->result, job->result_id, !spec.workloads.empty());
    std::string text = summary_text(job->result, job->result_id, job->job_id, job->runner) +
                       gates_text(job->result) + rows_text(job->result) + next;
    if (job->result.contains("build") && job->result["build"].is_object() &&
        job->result.value("stage", "") == "build" && job->result.value("status", "") != "passed")
      text +=
          "build log:\n" + clip_tail(job->result["build"].value("log", ""), kMaxLogChars) + "\n";
    else if (job->result.contains("log_tail"))
      text += "worker log (tail):\n" + clip_tail(job->result.value("log_tail", ""), kMaxLogChars) +
              "\n";
    // "next: ...\n" as the error's next_step, so the text says it once.
    const std::string step = next.empty() ? "" : next.substr(6, next.size() - 7);
    return to_tool_result(*job, text, step);
  };
  return tool;
}

}  // namespace kiln::tools
