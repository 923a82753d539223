// synccheck: synchronization bugs in a candidate. The static engine (default) compiles it to
// PTX and analyzes every path for every thread, on this machine, in about a second; the gpu
// engine runs compute-sanitizer's synccheck on a runner, on one workload.
#include "check_report_output.h"
#include "kiln/check/static_synccheck.h"
#include "kiln/ptx/parser.h"
#include "kiln/tools/tool_factories.h"
#include "sanitize_engine.h"

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

mcp::ToolResult run_static(CandidateCompiler& compiler, const json& arguments,
                           const Candidate& candidate) {
  auto compiled = compiler.compile(arguments, candidate);
  if (!compiled)
    return check_refusal("static", mcp::ErrorCode::kInvalidArguments, compiled.error().message);
  if (!compiled->ok) {
    std::string message =
        "the candidate does not compile (" + std::to_string(compiled->errors()) + " error(s))";
    for (const auto& d : compiled->diagnostics) {
      if (d.is_error()) {
        message += "; first: " + d.to_string();
        break;
      }
    }
    return check_refusal("static", mcp::ErrorCode::kCompileError, message,
                         "run compile for every diagnostic, fix them, then synccheck again");
  }
  auto parsed = ptx::parse_ptx(compiled->ptx, {compiled->file_name + ".ptx"});
  if (!parsed) {
    return check_refusal("static", mcp::ErrorCode::kUnavailable,
                         "kiln could not read the PTX nvcc produced: " + parsed.error().message,
                         "use engine \"gpu\" (compute-sanitizer) instead");
  }
  check::SyncCheckOptions options;
  options.warp_aligned_x = arguments.value("warp_aligned", true);
  const check::CheckReport report = check::static_synccheck(parsed->module, options);
  CheckOutputOptions output = output_options(arguments, "static", compiled->arch);
  output.extra = {{"arch", compiled->arch},
                  {"compile",
                   {{"cache_hit", compiled->cache_hit},
                    {"seconds", compiled->seconds},
                    {"ptx_path", compiled->ptx_path.string()}}}};
  return check_report_result(report, output);
}

}  // namespace

mcp::Tool make_synccheck_tool(std::shared_ptr<CandidateCompiler> compiler,
                              std::shared_ptr<GpuJobs> jobs) {
  mcp::Tool tool;
  tool.name = "synccheck";
  tool.title = "Check a candidate's synchronization";
  tool.description =
      "Find synchronization bugs before they hang or corrupt a run: __syncthreads/bar.sync "
      "under thread-divergent code (early returns, divergent loops), warp collectives "
      "(shfl/vote/ldmatrix/mma/wgmma) under divergence or with masks naming absent lanes, "
      "named-barrier count mismatches, mbarriers used before init or without the fence, "
      "cp.async data read before its wait, bulk copies without expect_tx, wgmma without "
      "fence/commit/wait. engine \"static\" (default) analyzes the PTX for every thread on this "
      "machine in about a second; \"gpu\" runs compute-sanitizer synccheck on a runner. Each "
      "finding has the .cu line, the PTX line and a fix. Pass `candidate` (a kernel.cu path) or "
      "`source` (the code).";
  tool.input_schema = check_input_schema(
      {{"arch",
        {{"type", "string"},
         {"pattern", "^sm_[0-9]+[af]?$"},
         {"description", "static engine: nvcc architecture; default: the task's"}}},
       {"engine",
        {{"type", "string"},
         {"enum", {"static", "gpu"}},
         {"description", "static (default, no GPU) or gpu (compute-sanitizer on a runner)"}}},
       {"warp_aligned",
        {{"type", "boolean"},
         {"description", "static engine: blockDim.x is a multiple of 32 (default true)"}}}});
  tool.output_schema = check_report_schema();
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = true};
  tool.handler = [compiler, jobs](const json& arguments, mcp::CallContext& context) {
    const std::string engine = arguments.value("engine", "static");
    auto candidate = compiler->candidate(arguments);
    if (!candidate)
      return check_refusal(engine, mcp::ErrorCode::kInvalidArguments, candidate.error().message);
    if (engine == "static")
      return with_candidate_note(run_static(*compiler, arguments, *candidate), *candidate);
    return with_candidate_note(run_gpu_check(*jobs, *candidate, arguments, "synccheck", context),
                               *candidate);
  };
  return tool;
}

}  // namespace kiln::tools
