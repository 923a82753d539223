// racecheck: shared- and global-memory hazards (RAW, WAR, WAW between threads) in a candidate,
// found by compute-sanitizer's racecheck on a runner. (The dynamic engine on the CPU simulator
// is issue 5's next step; until then racecheck needs a GPU runner.)
#include "check_report_output.h"
#include "kiln/tools/tool_factories.h"
#include "sanitize_engine.h"

namespace kiln::tools {

using json = nlohmann::json;

mcp::Tool make_racecheck_tool(std::shared_ptr<CandidateCompiler> compiler,
                              std::shared_ptr<GpuJobs> jobs) {
  mcp::Tool tool;
  tool.name = "racecheck";
  tool.title = "Find data races in a candidate";
  tool.description =
      "Find read-after-write, write-after-read and write-after-write hazards between threads on "
      "shared memory (a missing __syncthreads between a tile's store and other threads' "
      "loads, a reused buffer without a barrier) by running compute-sanitizer racecheck on "
      "one workload on a GPU runner. Each finding names the kernel, the .cu line of one access "
      "and the other, and how to order them. Needs a GPU runner (KILN_RUNNER or a local "
      "GPU); use synccheck first, it needs none. Pass `candidate` (a kernel.cu path) or `source` "
      "(the code).";
  tool.input_schema = check_input_schema(json::object());
  tool.output_schema = check_report_schema();
  tool.annotations = {
      .read_only = true, .destructive = false, .idempotent = true, .open_world = true};
  tool.handler = [compiler, jobs](const json& arguments, mcp::CallContext& context) {
    auto candidate = compiler->candidate(arguments);
    if (!candidate)
      return check_refusal("gpu", mcp::ErrorCode::kInvalidArguments, candidate.error().message);
    return with_candidate_note(run_gpu_check(*jobs, *candidate, arguments, "racecheck", context),
                               *candidate);
  };
  return tool;
}

}  // namespace kiln::tools
