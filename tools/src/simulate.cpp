// simulate: a candidate run on kiln's CPU PTX simulator at the task's small sim_workloads and
// compared with the CPU reference. The work happens in a kiln-sim-run subprocess (the
// candidate's host code runs there, so a crash or a runaway kernel never reaches the server),
// killed on cancellation or past its wall-time limit; its JSON lines become MCP progress.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "kiln/base/process.h"
#include "kiln/base/process_output.h"
#include "kiln/base/program_path.h"
#include "kiln/tasks/shape.h"
#include "kiln/tools/candidate_source.h"
#include "kiln/tools/task_source.h"
#include "kiln/tools/tool_factories.h"
#include "sim_process.h"
#include "sim_report.h"

namespace kiln::tools {

using json = nlohmann::json;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kDefaultTimeLimitSeconds = 60;
constexpr uint64_t kDefaultSeed = 1;
constexpr size_t kMaxStderrInText = 1500;

// A simulation that did not run: the error, and `ok: false`.
mcp::ToolResult refusal(mcp::ErrorCode code, const std::string& message,
                        const std::string& next_step = "") {
  mcp::ToolResult result = mcp::ToolResult::error(code, message, next_step);
  result.structured["ok"] = false;
  return result;
}

// A failure of the run itself (no report): the message, what to do, and the process's stderr.
mcp::ToolResult run_failure(mcp::ErrorCode code, const std::string& message,
                            const std::string& stage, const std::string& stderr_tail,
                            const json& progress_seen, const std::string& next_step = "") {
  mcp::ToolResult result = refusal(code, message, next_step);
  result.structured["stage"] = stage;
  if (!progress_seen.empty()) result.structured["finished_workloads"] = progress_seen;
  if (!stderr_tail.empty()) {
    result.structured["stderr_tail"] = stderr_tail;
    const std::string shown =
        stderr_tail.size() > kMaxStderrInText
            ? "..." + stderr_tail.substr(stderr_tail.size() - kMaxStderrInText)
            : stderr_tail;
    result.text += "\nstderr of kiln-sim-run (the candidate's host code prints here):\n" + shown;
  }
  return result;
}

struct SimulateArguments {
  std::vector<std::string> workloads;  // names from the task's sim_workloads; empty: all
  std::vector<std::string> shapes;     // ad-hoc "M=256,N=256,K=256", checked by parse_shape
  uint64_t seed = kDefaultSeed;
  std::optional<uint64_t> instruction_budget;
  double time_limit_s = kDefaultTimeLimitSeconds;
};

Result<SimulateArguments> parse_arguments(const json& arguments, const tasks::Task& task) {
  SimulateArguments out;
  for (const std::string& name : arguments.value("workloads", std::vector<std::string>()))
    if (std::find(out.workloads.begin(), out.workloads.end(), name) == out.workloads.end())
      out.workloads.push_back(name);
  std::string known;
  for (const auto& workload : task.sim_workloads)
    known += (known.empty() ? "" : ", ") + workload.name;
  if (task.sim_workloads.empty())
    return make_error("task " + task.name +
                      " has no sim_workloads, so there is nothing to "
                      "simulate; use benchmark on a GPU");
  for (const std::string& name : out.workloads)
    if (std::none_of(task.sim_workloads.begin(), task.sim_workloads.end(),
                     [&](const tasks::Workload& w) { return w.name == name; }))
      return make_error("task " + task.name + " has no sim_workload '" + name +
                        "'; pass names from its sim_workloads: " + known);
  for (const std::string& shape : arguments.value("shapes", std::vector<std::string>())) {
    auto parsed = tasks::parse_shape(task, shape);
    if (!parsed) return make_error(parsed.error().message);
    out.shapes.push_back(shape);
  }
  if (arguments.contains("seed")) out.seed = arguments["seed"].get<uint64_t>();
  if (arguments.contains("instruction_budget"))
    out.instruction_budget = arguments["instruction_budget"].get<uint64_t>();
  if (arguments.contains("time_limit_s"))
    out.time_limit_s = arguments["time_limit_s"].get<double>();
  return out;
}

std::string time_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", seconds);
  return text;
}

// What went wrong, and what to tell the agent, when kiln-sim-run gave up before running the
// workloads.
struct StageAdvice {
  mcp::ErrorCode code;
  std::string next_step;
};
StageAdvice stage_advice(const std::string& stage) {
  if (stage == "build_candidate")
    return {mcp::ErrorCode::kCompileError,
            "run compile on the same candidate for file:line diagnostics, fix them, then "
            "simulate again"};
  if (stage == "load_candidate")
    return {mcp::ErrorCode::kCompileError,
            "export extern \"C\" int kiln_launch(...) exactly as kiln/abi.h declares it, "
            "and define every function the file declares"};
  if (stage == "workloads")
    return {mcp::ErrorCode::kInvalidArguments,
            "pass `workloads` from the task's sim_workloads, or `shapes` naming every dim"};
  return {mcp::ErrorCode::kUnavailable,
          "this is a problem of kiln's installation or of the task bundle, not of the "
          "candidate; report it"};
}

json input_schema() {
  json schema{
      {"type", "object"},
      {"properties",
       {{"task",
         {{"type", "string"},
          {"pattern", kTaskNamePattern},
          {"description",
           "task name, or zoo:ID for zoo entry ID's contract; default: this run's task"}}},
        {"workloads",
         {{"type", "array"},
          {"items", {{"type", "string"}}},
          {"maxItems", 32},
          {"description",
           "names from the task's sim_workloads (get_task lists them); default: all, unless "
           "`shapes` is given"}}},
        {"shapes",
         {{"type", "array"},
          {"items", {{"type", "string"}}},
          {"maxItems", 8},
          {"description",
           "small ad-hoc shapes naming every dim of the task, e.g. \"M=256,N=256,K=256\"; each "
           "runs as a workload named by its values (\"256x256x256\"). Capped at 2^22 elements "
           "per tensor and 2*512^3 flops: large shapes belong to benchmark"}}},
        {"seed",
         {{"type", "integer"},
          {"minimum", 0},
          {"description", "seed of the input draws; default 1. Another seed, other inputs"}}},
        {"instruction_budget",
         {{"type", "integer"},
          {"minimum", 0},
          {"description",
           "warp-instructions one kernel launch may execute before it is stopped (0: no limit); "
           "default: the simulator's 2e9"}}},
        {"time_limit_s",
         {{"type", "number"},
          {"minimum", 0.1},
          {"maximum", 600},
          {"description",
           "wall seconds the simulation may take, and any one launch; default 60 (building the "
           "candidate is not counted)"}}}}},
      {"additionalProperties", false}};
  add_candidate_properties(schema, LegacyPath::kAccepted);
  return schema;
}

json output_schema() {
  const json counts = {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}};
  const json workload = {
      {"type", "object"},
      {"properties",
       {{"name", {{"type", "string"}}},
        {"passed", {{"type", "boolean"}}},
        {"status",
         {{"type", "string"},
          {"enum", {"pass", "wrong_answer", "launch_error", "fault", "harness_error"}}}},
        {"message", {{"type", "string"}}},
        // A number, or "inf"/"nan" as text (JSON has no such numbers).
        {"max_abs_error",
         {{"anyOf",
           {{{"type", "number"}}, {{"type", "string"}, {"enum", {"inf", "-inf", "nan"}}}}}}},
        {"max_rel_error",
         {{"anyOf",
           {{{"type", "number"}}, {{"type", "string"}, {"enum", {"inf", "-inf", "nan"}}}}}}},
        {"mismatches", {{"type", "integer"}}},
        {"checked", {{"type", "integer"}}},
        {"first_mismatches", {{"type", "array"}, {"items", {{"type", "object"}}}}},
        {"nan", {{"type", "integer"}}},
        {"inf", {{"type", "integer"}}},
        {"unwritten", {{"type", "integer"}}},
        {"faults", {{"type", "array"}, {"items", {{"type", "object"}}}}},
        {"diagnostics", {{"type", "array"}, {"items", {{"type", "string"}}}}},
        {"printf_output",
         {{"type", "string"},
          {"description",
           "what the kernels printed with printf, in the order the simulator ran "
           "the threads; the first 4000 bytes"}}},
        {"printf_bytes",
         {{"type", "integer"}, {"description", "all the bytes the kernels printed"}}},
        {"printf_note", {{"type", "string"}}},
        {"stats",
         {{"type", "object"},
          {"description", "counts from the simulator, not times"},
          {"properties",
           {{"launches", {{"type", "integer"}}},
            {"kernels", {{"type", "array"}, {"items", {{"type", "string"}}}}},
            {"warp_instructions", {{"type", "integer"}}},
            {"lane_instructions", {{"type", "integer"}}},
            {"by_class", counts},
            {"bytes_by_space", counts},
            {"shared_bank_conflicts", {{"type", "integer"}}},
            {"divergent_branches", {{"type", "integer"}}}}}}}}},
      {"required", {"name", "passed", "status"}}};
  return json{{"type", "object"},
              {"properties",
               {{"ok", {{"type", "boolean"}}},
                {"task", {{"type", "string"}}},
                {"file", {{"type", "string"}}},
                {"seed", {{"type", "integer"}}},
                {"passed", {{"type", "integer"}}},
                {"total", {{"type", "integer"}}},
                {"workloads", {{"type", "array"}, {"items", workload}}},
                {"stats_note", {{"type", "string"}}},
                {"next", {{"type", "string"}}},
                {"stage", {{"type", "string"}}},
                {"finished_workloads", {{"type", "array"}, {"items", {{"type", "object"}}}}},
                {"stderr_tail", {{"type", "string"}}}}},
              {"required", {"ok"}}};
}

mcp::ToolResult simulate(const SimulateToolConfig& config, const tasks::Task& task,
                         const Candidate& candidate, const SimulateArguments& args,
                         mcp::CallContext& context) {
  CallDir dir(config.work_dir.empty() ? fs::temp_directory_path() / "kiln-simulate"
                                      : config.work_dir);
  if (dir.path().empty())
    return refusal(mcp::ErrorCode::kUnavailable, "cannot make a build folder under " +
                                                     config.work_dir.string() +
                                                     "; check that the disk is writable");
  const std::string name = candidate.path.empty() ? "kernel.cu" : candidate.path;
  PathShortener shorten;
  fs::path source = candidate.file;
  if (source.empty()) {
    source = dir.path() / "kernel.cu";
    std::ofstream(source) << candidate.source;
  }
  shorten.add(source.string(), name);
  shorten.add(dir.path().string() + "/", "");

  std::vector<std::string> argv = sim_task_arguments(task);
  argv.insert(argv.end(), {"--source", source.string(), "--build-dir",
                           (dir.path() / "build").string(), "--seed", std::to_string(args.seed),
                           "--time-limit", time_text(args.time_limit_s), "--progress"});
  for (const std::string& workload : args.workloads)
    argv.insert(argv.end(), {"--workload", workload});
  for (const std::string& shape : args.shapes) argv.insert(argv.end(), {"--dims", shape});
  if (args.instruction_budget)
    argv.insert(argv.end(), {"--instruction-budget", std::to_string(*args.instruction_budget)});

  const size_t total = args.workloads.empty() && args.shapes.empty()
                           ? task.sim_workloads.size()
                           : args.workloads.size() + args.shapes.size();
  const auto started = Clock::now();
  const auto deadline =
      started + std::chrono::duration_cast<Clock::duration>(
                    std::chrono::duration<double>(config.build_allowance_s + args.time_limit_s));
  std::string last_line;
  json finished = json::array();
  CancelWatch watch(context);
  context.progress(0, static_cast<double>(total + 1), "building " + name + " for the simulator");
  const SimRun run = run_sim_runner(
      config.sim_runner, argv, dir.path(), deadline, watch.flag(), [&](std::string_view line) {
        json event = json::parse(line, nullptr, false);
        if (event.is_object() && event.contains("event")) {
          if (event["event"] == "built") {
            context.progress(1, static_cast<double>(total + 1),
                             "built the candidate and the CPU reference; running " +
                                 std::to_string(total) + " workload(s)");
          } else if (event["event"] == "workload") {
            finished.push_back({{"name", event.value("workload", "")},
                                {"passed", event.value("pass", false)},
                                {"status", event.value("status", "")}});
            context.progress(
                static_cast<double>(finished.size() + 1), static_cast<double>(total + 1),
                "workload " + event.value("workload", "") + ": " + event.value("status", ""));
          }
        } else {
          last_line = std::string(line);
        }
        return true;
      });
  const ProcessExit& exit = run.exit;
  const std::string stderr_tail = shorten(run.stderr_tail);
  const std::string during = finished.size() < total
                                 ? " (" + std::to_string(finished.size()) + " of " +
                                       std::to_string(total) + " workloads had finished)"
                                 : "";
  switch (exit.how) {
    case ProcessExit::How::kSpawnFailed:
      return refusal(mcp::ErrorCode::kUnavailable,
                     "cannot start the simulator driver " + config.sim_runner.string() + ": " +
                         exit.spawn_error +
                         "; build the kiln-sim-run target, or install it next to kiln");
    case ProcessExit::How::kCancelled:
      return run_failure(mcp::ErrorCode::kRunFailed,
                         "cancelled: the simulation of " + name + " was stopped" + during,
                         "cancelled", "", finished);
    case ProcessExit::How::kTimedOut:
      return run_failure(
          mcp::ErrorCode::kRunFailed,
          "stopped after " + time_text(exit.elapsed.count()) + " s: the simulation ran past " +
              "time_limit_s (" + time_text(args.time_limit_s) + " s, plus " +
              time_text(config.build_allowance_s) + " s for building)" + during +
              ". A kernel may loop forever (check loop bounds and exit conditions), or the "
              "workload may be too large for the simulator; pass fewer `workloads` or a larger "
              "time_limit_s",
          "time_limit", stderr_tail, finished);
    case ProcessExit::How::kSignaled:
      return run_failure(mcp::ErrorCode::kRunFailed,
                         "kiln-sim-run crashed (" + signal_name(exit.signal) + ") while running " +
                             name + during +
                             "; the candidate's host code runs in it, so check kiln_launch's "
                             "host-side pointer use (device pointers must not be dereferenced on "
                             "the host)",
                         "crashed", stderr_tail, finished);
    case ProcessExit::How::kRefused:
      return run_failure(mcp::ErrorCode::kRunFailed,
                         "kiln-sim-run's output could not be read: " + run.output_problem, "output",
                         stderr_tail, finished);
    case ProcessExit::How::kExited:
      break;
  }
  const json report = json::parse(last_line, nullptr, false);
  if (!report.is_object() || !report.contains("ok"))
    return run_failure(mcp::ErrorCode::kRunFailed,
                       "kiln-sim-run exited with status " + std::to_string(exit.exit_code) +
                           " without a report" + during,
                       "crashed", stderr_tail, finished);
  if (!report["ok"].get<bool>()) {
    const std::string stage = report.value("stage", "");
    const StageAdvice advice = stage_advice(stage);
    return run_failure(advice.code, shorten(report.value("error", "kiln-sim-run failed")), stage,
                       "", finished, advice.next_step);
  }
  return simulate_result(report, name, shorten);
}

}  // namespace

fs::path default_sim_runner_path() { return program_beside_self("kiln-sim-run"); }

mcp::Tool make_simulate_tool(std::shared_ptr<TaskSource> tasks, SimulateToolConfig config) {
  auto shared_config = std::make_shared<const SimulateToolConfig>(std::move(config));
  mcp::Tool tool;
  tool.name = "simulate";
  tool.title = "Run a candidate on the CPU simulator";
  tool.description =
      "Run a candidate kernel.cu on kiln's CPU PTX simulator at the task's small sim_workloads "
      "or at small `shapes` you give (no GPU needed) and compare every output with the CPU "
      "reference: pass/fail per workload, max abs/rel error, mismatch count, first mismatching "
      "indices with expected "
      "and actual values, NaN/Inf counts. Out-of-bounds or misaligned accesses come back with "
      "block, thread, address and the PTX and .cu line. Device printf output comes back per "
      "workload (printf_output), so printf debugging works here. Also returns counts from the "
      "simulator (not times): instructions by class, bytes per memory space, shared-memory "
      "bank conflicts, divergent branches. Use it after compile succeeds and before "
      "benchmark. Takes seconds; a runaway kernel is stopped by time_limit_s. Pass `candidate` "
      "(a kernel.cu path) or `source` (the code). `task: \"zoo:ID\"` holds it to zoo entry ID's "
      "contract (meta.json test block, its op's CPU "
      "reference); with no candidate, it runs the entry's kernel.cu.";
  tool.input_schema = input_schema();
  tool.output_schema = output_schema();
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = false};
  tool.handler = [tasks, shared_config](const json& arguments, mcp::CallContext& context) {
    auto candidate = resolve_candidate(arguments, shared_config->roots);
    if (!candidate) return refusal(mcp::ErrorCode::kInvalidArguments, candidate.error().message);
    auto task = tasks->get(arguments.value("task", ""));
    if (!task)
      return with_candidate_note(refusal(mcp::ErrorCode::kNotFound, task.error().message),
                                 *candidate);
    auto args = parse_arguments(arguments, **task);
    if (!args)
      return with_candidate_note(refusal(mcp::ErrorCode::kInvalidArguments, args.error().message),
                                 *candidate);
    return with_candidate_note(simulate(*shared_config, **task, *candidate, *args, context),
                               *candidate);
  };
  return tool;
}

}  // namespace kiln::tools
