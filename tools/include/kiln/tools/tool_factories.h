// One factory per MCP tool; each lives in its own file of tools/src/.
#pragma once

#include <memory>

#include "kiln/kb/kb_service.h"
#include "kiln/mcp/long_call.h"
#include "kiln/mcp/tool.h"
#include "kiln/tools/candidate_compiler.h"
#include "kiln/tools/candidate_source.h"
#include "kiln/tools/gpu_jobs.h"
#include "kiln/tools/task_source.h"

namespace kiln::tools {

class FrontierSource;  // kiln/tools/frontier_source.h

mcp::Tool make_get_task_tool(std::shared_ptr<TaskSource> source);

// The knowledge base (kb/): the zoo and the PTX references, over one lazily built index.
mcp::Tool make_search_zoo_tool(std::shared_ptr<kb::KbService> kb);
mcp::Tool make_read_zoo_entry_tool(std::shared_ptr<kb::KbService> kb);
mcp::Tool make_read_ptx_spec_tool(std::shared_ptr<kb::KbService> kb);

// compile (engines/compiler/): nvcc on this machine, results cached by content.
mcp::Tool make_compile_tool(std::shared_ptr<CandidateCompiler> compiler);

// simulate (engines/sim/): kiln-sim-run in a subprocess, the candidate on the CPU simulator.
struct SimulateToolConfig {
  CandidateRoots roots;              // the run directory, plus the task bundles
  std::filesystem::path sim_runner;  // the kiln-sim-run executable
  std::filesystem::path work_dir;    // per-call build folders go here; empty: $TMPDIR/kiln-simulate
  double build_allowance_s = 240;    // nvcc and g++ time allowed on top of time_limit_s
};

// The checks (engines/check/): synccheck's static engine compiles to PTX here; the sim engines
// of both run kiln-sim-run --synccheck / --racecheck (configured as simulate is: `sim`); the gpu
// engine of both runs compute-sanitizer on a runner.
mcp::Tool make_synccheck_tool(std::shared_ptr<CandidateCompiler> compiler,
                              std::shared_ptr<GpuJobs> jobs, SimulateToolConfig sim);
mcp::Tool make_racecheck_tool(std::shared_ptr<CandidateCompiler> compiler,
                              std::shared_ptr<GpuJobs> jobs, SimulateToolConfig sim);
mcp::Tool make_simulate_tool(std::shared_ptr<TaskSource> tasks, SimulateToolConfig config);
// kiln-sim-run next to the running executable (in a build tree both are in build/bin).
std::filesystem::path default_sim_runner_path();

// GPU tools (runner/): a job on a runner, its RESULT stored in the result store.
mcp::Tool make_benchmark_tool(std::shared_ptr<GpuJobs> jobs);
mcp::Tool make_profile_tool(std::shared_ptr<GpuJobs> jobs);

// The frontier (frontier/): record_candidate admits a benchmarked candidate by result id;
// list_frontier shows the members and the run's recent results.
mcp::Tool make_record_candidate_tool(std::shared_ptr<FrontierSource> frontier);
mcp::Tool make_list_frontier_tool(std::shared_ptr<FrontierSource> frontier);

// Diagnostic tool for client tests (progress and cancellation); registered only
// with `kiln mcp --test-tools`.
mcp::Tool make_test_wait_tool();

// wait_job: the result of a long call that answered status "running" (mcp/long_call.h).
mcp::Tool make_wait_job_tool(std::shared_ptr<mcp::JobStore> jobs, mcp::WaitBudget budget = {});

}  // namespace kiln::tools
