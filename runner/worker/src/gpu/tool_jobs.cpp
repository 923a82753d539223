#include "tool_jobs.h"

#include <fstream>

#include "kiln/compiler/kernel_build.h"
#include "kiln/compiler/subprocess.h"
#include "kiln/worker/ncu_report.h"
#include "kiln/worker/sanitizer_report.h"

namespace kiln::worker {

namespace {

// The path the worker was given (WorkerOptions), else the first candidate that exists, else
// `name` for PATH.
std::string find_tool(const std::filesystem::path& given,
                      const std::vector<std::filesystem::path>& candidates,
                      const std::string& name) {
  if (!given.empty()) return given.string();
  std::error_code ec;
  for (const auto& path : candidates) {
    if (std::filesystem::exists(path, ec)) return path.string();
  }
  return name;  // left to PATH
}

double seconds_left(const ToolJobInput& input) {
  const double used =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - input.started).count();
  return input.spec.limits.job_seconds - used -
         std::max(10.0, 0.05 * input.spec.limits.job_seconds);
}

std::vector<std::string> run_once_args(const ToolJobInput& input, const std::string& workload,
                                       int calls) {
  return {input.options.executable.string(),
          "--run-once",
          "--job",
          input.options.job_path.string(),
          "--gpu",
          std::to_string(input.options.gpu),
          "--workload",
          workload,
          "--calls",
          std::to_string(calls)};
}

std::string tail(const std::string& text, size_t bytes = 3000) {
  return text.size() <= bytes ? text : "..." + text.substr(text.size() - bytes);
}

// The smallest workload by work (flops, else bytes): sanitizers slow kernels 10-100x.
std::string smallest_workload(const ToolJobInput& input) {
  std::string best;
  double best_cost = 0;
  for (const auto& w : input.workloads) {
    double cost = 0;
    if (auto f = tasks::evaluate(input.task.flops.empty() ? input.task.bytes : input.task.flops,
                                 w.dims)) {
      cost = static_cast<double>(*f);
    }
    if (best.empty() || cost < best_cost) {
      best = w.name;
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace

void run_profile(const ToolJobInput& input, EventStream& events, WorkerResult* result) {
  const compiler::Toolchain& toolchain = input.options.toolchain;
  const std::string ncu =
      find_tool(input.options.ncu, {toolchain.cuda_root / "bin" / "ncu"}, "ncu");
  std::string workload = input.spec.profile_workload;
  if (workload.empty()) workload = input.workloads.empty() ? "" : input.workloads.front().name;
  const std::filesystem::path report = input.options.job_path.parent_path() / "profile";
  std::vector<std::string> argv = {ncu, "--clock-control", "none", "--target-processes", "all"};
  for (const char* section : {"SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats",
                              "MemoryWorkloadAnalysis", "ComputeWorkloadAnalysis"}) {
    argv.push_back("--section");
    argv.push_back(section);
  }
  argv.insert(argv.end(),
              {"--launch-count", "20", "--export", report.string(), "--force-overwrite"});
  for (const auto& arg : run_once_args(input, workload, 1)) argv.push_back(arg);
  events.log("info", "ncu on workload " + workload);
  compiler::ProcessOptions options;
  options.timeout_seconds = std::max(30.0, seconds_left(input));
  const compiler::ProcessResult profiled = compiler::run_process(argv, options);
  result->profile = {{"workload", workload}, {"command", argv}, {"seconds", profiled.seconds}};
  const std::filesystem::path rep = report.string() + ".ncu-rep";
  std::error_code ec;
  if (!profiled.ok() || !std::filesystem::exists(rep, ec)) {
    result->status = "error";
    result->error = "ncu did not produce a report (" + profiled.describe() +
                    "): " + tail(profiled.output, 1500);
    return;
  }
  compiler::ProcessResult imported = compiler::run_process(
      {ncu, "--import", rep.string(), "--csv", "--page", "raw", "--print-units", "base"});
  std::string parse_error;
  std::vector<NcuKernel> kernels = NcuReport::parse(imported.output, &parse_error);
  if (kernels.empty()) {
    imported = compiler::run_process({ncu, "--import", rep.string(), "--csv", "--page", "raw"});
    kernels = NcuReport::parse(imported.output, &parse_error);
  }
  {
    std::ofstream csv(input.options.job_path.parent_path() / "profile.csv");
    csv << imported.output;
  }
  if (kernels.empty()) {
    result->status = "error";
    result->error =
        "ncu's report had no kernels (" + parse_error + "): " + tail(imported.output, 1500);
    return;
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& k : kernels) list.push_back(k.to_json());
  result->profile["kernels"] = list;
  result->profile["report"] = rep.string();
  result->status = "passed";
}

void run_sanitize(const ToolJobInput& input, EventStream& events, WorkerResult* result) {
  const compiler::Toolchain& toolchain = input.options.toolchain;
  const std::string sanitizer =
      find_tool(input.options.compute_sanitizer,
                {toolchain.cuda_root / "bin" / "compute-sanitizer",
                 toolchain.cuda_root / "compute-sanitizer" / "compute-sanitizer"},
                "compute-sanitizer");
  std::string workload = input.spec.sanitize_workload;
  if (workload.empty()) workload = smallest_workload(input);
  nlohmann::json tools = nlohmann::json::array();
  result->status = "passed";
  std::string first_error;
  bool tool_broke = false;
  const auto& names = input.spec.sanitize_tools;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& tool = names[i];
    events.progress(workload, static_cast<int>(i), static_cast<int>(names.size()),
                    "compute-sanitizer --tool " + tool);
    std::vector<std::string> argv = {sanitizer, "--tool",           tool, "--print-limit",
                                     "200",     "--show-backtrace", "no"};
    for (const auto& arg : run_once_args(input, workload, 2)) argv.push_back(arg);
    compiler::ProcessOptions options;
    options.timeout_seconds =
        std::max(20.0, seconds_left(input) / static_cast<double>(names.size() - i));
    const compiler::ProcessResult run = compiler::run_process(argv, options);
    {
      std::ofstream raw(input.options.job_path.parent_path() / ("sanitize-" + tool + ".txt"));
      raw << run.output;  // kept beside job.json for whoever reads the job folder
    }
    SanitizerReport report = SanitizerReport::parse(run.output, tool);
    nlohmann::json entry = report.to_json();
    entry["tool"] = tool;
    entry["seconds"] = run.seconds;
    entry["exit"] = run.describe();
    if (run.timed_out) entry["timed_out"] = true;
    if (!run.started || report.tool_failed || (run.timed_out && report.findings.empty())) {
      tool_broke = true;
      entry["output_tail"] = tail(run.output, 1500);
    }
    for (const auto& f : report.findings) {
      if (f.severity == "error" && first_error.empty()) {
        first_error = "compute-sanitizer " + tool + ": " + f.kind + " in " + f.kernel;
        if (!f.file.empty()) first_error += " at " + f.file + ":" + std::to_string(f.line);
        if (!f.thread.empty()) first_error += " (thread " + f.thread + " of block " + f.block + ")";
      }
    }
    if (report.findings.empty() && report.error_summary > 0 && first_error.empty()) {
      first_error = "compute-sanitizer " + tool + " reported " +
                    std::to_string(report.error_summary) + " errors";
    }
    tools.push_back(entry);
  }
  result->sanitize = {{"workload", workload}, {"tools", tools}};
  if (!first_error.empty()) {
    result->status = "failed";
    result->error = first_error + "; fix it and run sanitize again";
  } else if (tool_broke) {
    result->status = "error";
    result->error =
        "compute-sanitizer could not check the candidate; see sanitize.tools[].output_tail";
  }
}

}  // namespace kiln::worker
