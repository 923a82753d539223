// synccheck: synchronization bugs in a candidate. The static engine (default) compiles it to
// PTX and analyzes every path for every thread, on this machine, in about a second; the sim
// engine runs the task's sim workloads under the simulator's synchronization checker on this
// CPU (sync_sim_engine.h); "static+sim" gives both in one result, each finding saying which
// engine found it; the gpu engine runs compute-sanitizer's synccheck on a runner.
#include <optional>

#include "check_report_output.h"
#include "kiln/check/static_synccheck.h"
#include "kiln/ptx/parser.h"
#include "kiln/tools/tool_factories.h"
#include "sanitize_engine.h"
#include "sim_checker_run.h"
#include "sync_sim_engine.h"

namespace kiln::tools {

using json = nlohmann::json;

namespace {

CheckOutputOptions output_options(const json& arguments, std::string engine, std::string where) {
  CheckOutputOptions options;
  options.tool = "synccheck";
  options.engine = std::move(engine);
  options.where = std::move(where);
  options.limit = arguments.value("limit", size_t{20});
  options.offset = arguments.value("offset", size_t{0});
  return options;
}

struct StaticRun {
  std::optional<mcp::ToolResult> refusal;
  check::CheckReport report;
  std::string arch;
  json extra = json::object();
};

StaticRun static_report(CandidateCompiler& compiler, const json& arguments,
                        const Candidate& candidate) {
  StaticRun out;
  auto refuse = [&](mcp::ErrorCode code, const std::string& message, const std::string& next = "") {
    out.refusal = check_refusal("static", code, message, next);
    return std::move(out);
  };
  auto compiled = compiler.compile(arguments, candidate);
  if (!compiled) return refuse(mcp::ErrorCode::kInvalidArguments, compiled.error().message);
  if (!compiled->ok) {
    std::string message =
        "the candidate does not compile (" + std::to_string(compiled->errors()) + " error(s))";
    for (const auto& d : compiled->diagnostics) {
      if (d.is_error()) {
        message += "; first: " + d.to_string();
        break;
      }
    }
    return refuse(mcp::ErrorCode::kCompileError, message,
                  "run compile for every diagnostic, fix them, then synccheck again");
  }
  auto parsed = ptx::parse_ptx(compiled->ptx, {compiled->file_name + ".ptx"});
  if (!parsed) {
    return refuse(mcp::ErrorCode::kUnavailable,
                  "kiln could not read the PTX nvcc produced: " + parsed.error().message,
                  "use engine \"gpu\" (compute-sanitizer) instead");
  }
  check::SyncCheckOptions options;
  options.warp_aligned_x = arguments.value("warp_aligned", true);
  out.report = check::static_synccheck(parsed->module, options);
  out.arch = compiled->arch;
  out.extra = {{"arch", compiled->arch},
               {"compile",
                {{"cache_hit", compiled->cache_hit},
                 {"seconds", compiled->seconds},
                 {"ptx_path", compiled->ptx_path.string()}}}};
  return out;
}

mcp::ToolResult run_static(CandidateCompiler& compiler, const json& arguments,
                           const Candidate& candidate) {
  StaticRun run = static_report(compiler, arguments, candidate);
  if (run.refusal) return std::move(*run.refusal);
  CheckOutputOptions output = output_options(arguments, "static", run.arch);
  output.extra = run.extra;
  return check_report_result(run.report, output);
}

// Where each finding of a combined report came from, and what the tool adds to its JSON.
struct FindingOrigin {
  std::string engine;         // "static" | "sim"
  std::string kind;           // sim: the dynamic kind (also the finding's cause)
  bool not_observed = false;  // static divergence the simulator did not see diverge
};

void annotate(mcp::ToolResult& result, const std::vector<FindingOrigin>& origins, size_t offset) {
  json& findings = result.structured["findings"];
  for (size_t i = 0; i < findings.size() && offset + i < origins.size(); ++i) {
    const FindingOrigin& o = origins[offset + i];
    findings[i]["engine"] = o.engine;
    if (o.not_observed) findings[i]["observed_at_run_time"] = false;
  }
}

// engine "sim" and "static+sim": the simulator's checker, with the static findings first.
mcp::ToolResult run_dynamic(CandidateCompiler& compiler, GpuJobs& jobs,
                            const SimulateToolConfig& sim, const json& arguments,
                            const Candidate& candidate, bool with_static,
                            mcp::CallContext& context) {
  const std::string engine = with_static ? "static+sim" : "sim";
  auto task = jobs.task(arguments.value("task", std::string()));
  if (!task) return check_refusal(engine, mcp::ErrorCode::kInvalidArguments, task.error().message);
  StaticRun statics;
  if (with_static) {
    statics = static_report(compiler, arguments, candidate);
    if (statics.refusal) return std::move(*statics.refusal);
  }
  SimSyncRun dynamic = run_sim_synccheck(sim, **task, candidate, arguments, context);
  if (dynamic.refusal) return std::move(*dynamic.refusal);
  bool sim_diverged = false;
  for (const std::string& kind : dynamic.kinds)
    sim_diverged = sim_diverged || kind == "barrier_divergence" || kind == "exit_at_barrier";
  check::CheckReport combined;
  std::vector<FindingOrigin> origins;
  size_t not_observed = 0;
  for (const check::Finding& f : statics.report.findings) {
    FindingOrigin o{"static", "", false};
    // The static engine flags a guard that may diverge; the run shows whether it did.
    if (f.kind == check::FindingKind::BarrierDivergence && !sim_diverged &&
        dynamic.uniform_barriers > 0) {
      o.not_observed = true;
      ++not_observed;
    }
    combined.findings.push_back(f);
    origins.push_back(o);
  }
  for (size_t i = 0; i < dynamic.report.findings.size(); ++i) {
    combined.findings.push_back(dynamic.report.findings[i]);
    origins.push_back({"sim", dynamic.kinds[i], false});
  }
  for (const std::string& note : statics.report.notes) combined.notes.push_back("static: " + note);
  for (const std::string& note : dynamic.report.notes) combined.notes.push_back("sim: " + note);
  if (not_observed != 0) {
    combined.notes.push_back(
        std::to_string(not_observed) +
        " static barrier_divergence finding(s) were not observed at run time: every bar.sync of "
        "the sim workloads completed with all threads at one instruction under " +
        std::to_string(dynamic.schedules) +
        " schedule(s), so the guard read the same value in every thread there (it may still "
        "diverge on other data)");
  }
  combined.finish();
  if (combined.findings.empty() && (statics.report.verdict == check::Verdict::Incomplete ||
                                    dynamic.report.verdict == check::Verdict::Incomplete))
    combined.verdict = check::Verdict::Incomplete;
  CheckOutputOptions output =
      output_options(arguments, engine,
                     (with_static ? statics.arch + " and " : std::string()) + "the simulator, " +
                         std::to_string(dynamic.schedules) + " schedule(s)");
  output.extra = dynamic.extra;
  if (with_static) output.extra.update(statics.extra);
  mcp::ToolResult result = check_report_result(combined, output);
  annotate(result, origins, arguments.value("offset", size_t{0}));
  return result;
}

json engine_properties() {
  json properties = sim_checker_properties(kMaxSyncSchedules);
  properties["engine"] = {
      {"type", "string"},
      {"enum", {"static", "sim", "static+sim", "gpu"}},
      {"description",
       "static (default: the PTX for every thread, about a second), sim (the task's sim "
       "workloads under the simulator's checker on this CPU: mbarrier phase overrun, "
       "over-arrival, expect_tx bytes, init/inval in use, barrier divergence at run time, "
       "deadlocks), static+sim (both in one result, each finding with its engine), or gpu "
       "(compute-sanitizer on a runner)"}};
  return properties;
}

// The check report schema, with what synccheck adds to each finding.
json synccheck_output_schema() {
  json schema = check_report_schema();
  schema["properties"]["findings"]["items"] = {
      {"type", "object"},
      {"properties",
       {{"engine", {{"type", "string"}, {"enum", {"static", "sim", "gpu"}}}},
        {"observed_at_run_time", {{"type", "boolean"}}}}}};
  return schema;
}

}  // namespace

mcp::Tool make_synccheck_tool(std::shared_ptr<CandidateCompiler> compiler,
                              std::shared_ptr<GpuJobs> jobs, SimulateToolConfig sim) {
  mcp::Tool tool;
  tool.name = "synccheck";
  tool.title = "Check a candidate's synchronization";
  tool.description =
      "Find synchronization bugs before they hang or corrupt a run: __syncthreads/bar.sync "
      "under divergent code, warp collectives under divergence or with bad masks, named-barrier "
      "count mismatches, mbarriers used before init or without the fence, cp.async data read "
      "before its wait, bulk copies without expect_tx, wgmma without fence/commit/wait. engine "
      "\"static\" (default) analyzes the PTX for every thread here in about a second; \"sim\" "
      "runs the task's sim workloads under kiln's run-time checker on this CPU under several "
      "warp schedules (a reused mbarrier phase a late waiter missed, over-arrival, expect_tx "
      "bytes that never arrive, init/inval in use, divergent or exited threads at barriers, "
      "deadlocks); \"static+sim\" returns both, each finding with its `engine`; \"gpu\" runs "
      "compute-sanitizer synccheck on a runner. Findings have the .cu and PTX lines and a fix. "
      "Pass `candidate` (a kernel.cu path) or `source` (the code).";
  json properties = engine_properties();
  properties["arch"] = {{"type", "string"},
                        {"pattern", "^sm_[0-9]+[af]?$"},
                        {"description", "static engine: nvcc architecture; default: the task's"}};
  properties["warp_aligned"] = {
      {"type", "boolean"},
      {"description", "static engine: blockDim.x is a multiple of 32 (default true)"}};
  tool.input_schema = check_input_schema(properties);
  tool.output_schema = synccheck_output_schema();
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = true};
  tool.handler = [compiler, jobs, sim](const json& arguments, mcp::CallContext& context) {
    const std::string engine = arguments.value("engine", "static");
    auto candidate = compiler->candidate(arguments);
    if (!candidate)
      return check_refusal(engine, mcp::ErrorCode::kInvalidArguments, candidate.error().message);
    if (engine == "static")
      return with_candidate_note(run_static(*compiler, arguments, *candidate), *candidate);
    if (engine == "sim" || engine == "static+sim")
      return with_candidate_note(run_dynamic(*compiler, *jobs, sim, arguments, *candidate,
                                             engine == "static+sim", context),
                                 *candidate);
    return with_candidate_note(run_gpu_check(*jobs, *candidate, arguments, "synccheck", context),
                               *candidate);
  };
  return tool;
}

}  // namespace kiln::tools
