#include "run_prompt.h"

#include <cstdio>
#include <sstream>

namespace kiln::cli {

namespace {

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%g%%", fraction * 100);
  return text;
}

}  // namespace

std::string run_prompt(const tasks::Task& task, const std::string& readme,
                       const std::filesystem::path& run_dir, const frontier::RunManifest& m) {
  const std::string scratch = "worktree/candidates/" + task.name + "/scratch";
  const std::string frontier = "worktree/candidates/" + task.name + "/frontier";
  std::ostringstream out;
  out << "# Run " << m.run_id << ": " << task.title << "\n\n"
      << "Write the fastest correct kernel for the task below. kiln (the MCP server `kiln`) "
         "owns correctness and timing: only its measurements count.\n\n"
      << "## The contract\n\n"
      << task.description << "\n\n"
      << "- Task `" << task.name << "`, sha256 `" << task.sha256
      << "` (frozen for this run: kiln refuses to start if the bundle changes).\n"
      << "- Target: `" << task.arch << "`.\n"
      << "- Signature (kiln_launch tensors, in order):";
  for (const auto& t : task.tensors) {
    out << " " << t.name << "[";
    for (size_t i = 0; i < t.shape.size(); ++i) out << (i ? "," : "") << t.shape[i];
    out << "] " << t.dtype << (t.is_output ? " (output)" : "") << ";";
  }
  out << "\n- Workloads (" << task.workloads.size() << ", all scored):";
  for (const auto& w : task.workloads) out << " " << w.name;
  out << "\n- Simulator workloads (small, for `simulate`):";
  for (const auto& w : task.sim_workloads) out << " " << w.name;
  out << "\n- Tolerance: atol " << task.tolerance.atol << ", rtol " << task.tolerance.rtol
      << ", max mismatch fraction " << task.tolerance.max_mismatch_fraction << ".\n"
      << "- Baseline: " << task.baseline_name << ".\n"
      << "- Scoring: the geometric mean over all workloads of baseline time / candidate time; "
         "one failed workload fails the candidate.\n";
  if (!task.banned_symbols.empty()) {
    out << "- Banned symbols (refused at link time):";
    for (const auto& s : task.banned_symbols) out << " " << s;
    out << "\n";
  }
  out << "\n### The task's README\n\n" << readme << "\n\n";
  out << "## This run\n\n"
      << "- Run directory: `" << run_dir.string() << "`; you work in `"
      << (run_dir / "worktree").string() << "` (a git repository).\n"
      << "- Write candidates under `" << scratch << "/` (the starter is `" << scratch
      << "/kernel.cu`). Tools take candidate paths relative to the run directory (`" << scratch
      << "/kernel.cu`) or absolute.\n"
      << "- `" << frontier
      << "/` is written by kiln only: each member's exact measured source, its "
      << "result, and `index.json`. Do not edit it.\n"
      << "- Runner: ";
  if (m.runners.empty()) {
    out << "none. Only the CPU tools work (compile, simulate, synccheck, racecheck on the "
           "simulator); benchmark, profile and record_candidate's revalidation need a GPU "
           "runner (`kiln setup --remote URL`, or KILN_RUNNER=URL when starting the agent).\n";
  } else {
    for (size_t i = 0; i < m.runners.size(); ++i) {
      out << (i ? ", " : "") << m.runners[i].url << " (";
      for (size_t g = 0; g < m.runners[i].gpus.size(); ++g)
        out << (g ? ", " : "") << m.runners[i].gpus[g];
      out << ")";
    }
    out << ".\n";
  }
  out << "- Promotion budget: a new best must beat the current best by "
      << percent(m.budget.promotion_margin) << ", every workload's timing CV at most "
      << percent(m.budget.max_cv) << ", and its revalidation must reproduce its geomean within "
      << percent(m.budget.revalidation_tolerance) << ".\n"
      << "- `live.log` in the run directory has one line per benchmark and frontier decision.\n\n";
  out << "## How to work with kiln\n\n"
      << "1. `get_task` for the contract; read the starter.\n"
      << "2. `search_zoo` / `read_zoo_entry` for kernels that solved similar problems; "
         "`read_ptx_spec` for instruction details.\n"
      << "3. `compile` for registers, spills, shared memory and occupancy; `simulate`, "
         "`synccheck` (`engine: \"static+sim\"` adds the mbarrier-protocol and barrier checker "
         "on the simulator) and `racecheck` (`engine: \"sim\"`, the default without a runner) "
         "to find bugs on the CPU before a GPU is touched.\n"
      << "4. `benchmark` for the correctness gates and timing against the baseline on every "
         "workload; it returns a `result_id`. `profile` to see why.\n"
      << "5. `record_candidate` with that `result_id`, a name, the approach (zoo techniques "
         "joined by '+', then ': ' and free text), your hypothesis and reason. A would-be new "
         "best is benchmarked again first. `list_frontier` shows the frontier and why "
         "candidates were refused.\n\n";
  out << "## Rules\n\n"
      << "- Only kiln's measurements count: numbers you compute, estimate or copy are never "
         "read.\n"
      << "- Scoring commands can pass a subset; a candidate counts only when every workload "
         "passes.\n"
      << "- Keep candidates with `record_candidate`; kiln copies them to the frontier and "
         "commits them. Commit your own work in the worktree as you like; kiln commits only "
         "its frontier files.\n"
      << "- Never edit the task bundle, the run's manifest or its result store.\n";
  for (const auto& rule : task.rules) out << "- " << rule << "\n";
  return out.str();
}

}  // namespace kiln::cli
