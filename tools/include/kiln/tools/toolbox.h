// Everything kiln offers over MCP, registered on a server in one call.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/mcp/server.h"

namespace kiln::frontier {
class PtxHasher;
class Revalidator;
}  // namespace kiln::frontier
namespace kiln::mcp {
class CallContext;
}  // namespace kiln::mcp
namespace kiln::tasks {
struct Task;
}  // namespace kiln::tasks

namespace kiln::tools {

struct ToolboxConfig {
  std::filesystem::path tasks_dir;     // folder of task bundles (tasks/NAME/task.json)
  std::filesystem::path run_dir;       // the run directory; empty when serving without one
  std::string default_task;            // task used when a call names none; empty: the only one
  bool test_tools = false;             // also register diagnostic tools for client tests
  bool conformance_fixtures = false;   // also register the MCP conformance suite's fixtures
  std::filesystem::path kb_dir;        // kb/ (zoo, PTX notes, hw); empty: kb::default_kb_dir()
  std::filesystem::path kb_cache_dir;  // where the kb index lives; empty: kiln::default_cache_dir()
  std::filesystem::path compile_cache_dir;  // compile results; empty: kiln::default_cache_dir()
  // GPU tools: KILN_RUNNER (comma-separated URLs) overrides runner_urls; KILN_RUNNER_TOKEN is the
  // token.
  std::vector<std::string> runner_urls;  // the runner_urls setting
  bool probe_local_gpu =
      true;  // with no runner URL, use this machine's GPU (/dev/nvidia0 + kiln-worker)
  std::filesystem::path worker;      // kiln-worker for the local GPU; empty: next to the executable
  std::filesystem::path sim_runner;  // kiln-sim-run for simulate; empty: next to the executable
  std::filesystem::path
      results_db;  // the result store; empty: frontier::default_store_path(run_dir)
  // record_candidate's revalidation job and PTX fingerprint; empty: a fresh benchmark through
  // the runner, and a compile through the compile cache (tests put fakes here).
  std::function<std::unique_ptr<frontier::Revalidator>(const tasks::Task&, mcp::CallContext&)>
      revalidator;
  std::shared_ptr<frontier::PtxHasher> ptx_hasher;
};

// With a run directory that holds a manifest.json (`kiln setup`), the run's task comes from
// the manifest (its bundle, its name, its runners, its budget) and the contract is frozen:
// when the bundle no longer hashes as the manifest says, registration fails with an error
// naming the files that changed, and `kiln mcp` refuses to start.

Status register_toolbox(mcp::Server& server, const ToolboxConfig& config);

}  // namespace kiln::tools
