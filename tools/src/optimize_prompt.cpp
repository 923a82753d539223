// The `optimize` prompt: the run's PROMPT.md, or, without a run directory, a
// prompt composed from the task's README.
#include "kiln/base/file.h"
#include "kiln/tools/toolbox_parts.h"

namespace kiln::tools {

namespace {

constexpr const char* kLoop =
    "\n\n## How to work with kiln\n"
    "1. `get_task` for the contract; read the starter kernel it names.\n"
    "2. `search_zoo` / `read_zoo_entry` for kernels that solved similar problems; `read_ptx_spec` "
    "for "
    "instruction details.\n"
    "3. `compile` to see registers, spills and shared memory; `simulate`, `synccheck` "
    "(`engine: \"static+sim\"` adds the mbarrier-protocol and barrier checker on the "
    "simulator) and `racecheck` (`engine: \"sim\"`, the default without a runner) to find bugs "
    "on the CPU before a GPU is touched.\n"
    "4. `benchmark` for correctness gates and timing against the baseline; `profile` to see why.\n"
    "5. `record_candidate` with the result id of a full benchmark (every workload) to put a "
    "passing kernel on the frontier; a would-be new best is benchmarked again first. "
    "`list_frontier` shows the frontier and why candidates were refused.\n"
    "Scoring commands can pass a subset; a candidate counts only when every workload passes.\n"
    "Only kiln's measurements count: numbers you compute yourself are never trusted.\n";

}  // namespace

mcp::Prompt make_optimize_prompt(std::shared_ptr<TaskSource> source,
                                 std::filesystem::path run_dir) {
  mcp::Prompt prompt;
  prompt.name = "optimize";
  prompt.title = "Optimize this run's kernel";
  prompt.description =
      "The instructions for an agent optimizing this run's task with kiln's tools.";
  prompt.arguments = {{"task", "task name; default: this run's task", false,
                       [source](const std::map<std::string, std::string>&) {
                         return source->names();  // completion/complete
                       }}};
  prompt.render = [source,
                   run_dir](const std::map<std::string, std::string>& args) -> Result<std::string> {
    if (!run_dir.empty() && std::filesystem::exists(run_dir / "PROMPT.md") && !args.count("task")) {
      return read_file(run_dir / "PROMPT.md");
    }
    auto task = source->get(args.count("task") ? args.at("task") : "");
    if (!task) return task.error();
    auto readme = read_file((*task)->readme_path);
    if (!readme) return readme.error();
    return "Write the fastest correct kernel for the task below.\n\n" + *readme + kLoop;
  };
  return prompt;
}

}  // namespace kiln::tools
