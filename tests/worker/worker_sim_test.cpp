// kiln-worker-sim, the worker built against kiln's simulated CUDA runtime (runner/worker/README.md,
// "The simulated worker"): the correctness gates on the CPU, in CI. Every cheat of
// tests/corpus/cheats whose gate needs no GPU activity record is rejected by that gate, honest
// kernels pass, and what the simulator cannot judge is reported as not run, never as passed.
//
// Environment: KILN_WORKER_SIM_BIN, KILN_SOURCE_DIR, KILN_WORKER_SIM_CACHE (the build cache).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "kiln/base/env.h"
#include "worker_jobs.h"
#include "worker_test_support.h"

namespace kiln::worker {
namespace {

using nlohmann::json;
using testing::brief;
using testing::failed_gates;
using testing::gate_state;
using testing::Job;
using testing::Outcome;

testing::WorkerRun sim_run() {
  testing::WorkerRun run;
  run.worker = env_or("KILN_WORKER_SIM_BIN", KILN_WORKER_SIM_BIN);
  run.cache = env_or("KILN_WORKER_SIM_CACHE", "");
  if (run.cache.empty())
    run.cache = std::filesystem::temp_directory_path() / "kiln-worker-sim-test";
  std::filesystem::create_directories(run.cache / "builds");
  return run;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool any_note_has(const json& result, const std::string& text) {
  for (const auto& note : result.value("notes", json::array()))
    if (note.get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

TEST(WorkerSim, EveryCheatItCanJudgeIsRejectedByItsGate) {
  const auto corpus = testing::source_dir() / "tests" / "corpus" / "cheats";
  const json manifest = json::parse(testing::read_text(corpus / "cheats.json"));
  std::vector<Job> jobs;
  std::vector<std::vector<std::string>> gates;
  for (const auto& cheat : manifest["cheats"]) {
    if (cheat.contains("simulator")) continue;  // why the simulator cannot judge it
    Job job;
    job.name = "cheat-" + cheat["name"].get<std::string>();
    job.task = manifest["task"];
    job.candidate = corpus / cheat["name"].get<std::string>() / "kernel.cu";
    job.workloads = manifest["sim_workloads"].get<std::vector<std::string>>();
    jobs.push_back(job);
    std::vector<std::string> accepted = {cheat["gate"].get<std::string>()};
    for (const auto& also : cheat.value("or", json::array())) accepted.push_back(also);
    gates.push_back(accepted);
  }
  ASSERT_GE(jobs.size(), 10u) << "most cheats need no activity record";
  const auto outcomes = testing::run_jobs(sim_run(), jobs);
  for (size_t i = 0; i < jobs.size(); ++i) {
    SCOPED_TRACE(jobs[i].name + " (must fail " + json(gates[i]).dump() + ")");
    const Outcome& o = outcomes[i];
    ASSERT_TRUE(o.problem.empty()) << brief(o);
    EXPECT_EQ(o.result.value("status", ""), "failed") << brief(o);
    const auto failed = failed_gates(o.result);
    EXPECT_TRUE(std::any_of(gates[i].begin(), gates[i].end(),
                            [&](const std::string& gate) { return contains(failed, gate); }))
        << "failed gates: " << json(failed).dump() << "; error: " << o.result.value("error", "");
  }
}

TEST(WorkerSim, HonestKernelsPassButAreNeverScored) {
  const auto tasks = testing::source_dir() / "tasks";
  const std::vector<Job> jobs = {
      {"fp16_gemm-starter", "verify", "fp16_gemm", tasks / "fp16_gemm" / "starter.cu", {}},
      {"rmsnorm-starter", "verify", "rmsnorm", tasks / "rmsnorm" / "starter.cu", {}},
      // Two of attention_fwd's four sim workloads (full and causal, both D), to keep the
      // simulated calls of this job near the others' length.
      {"attention_fwd-starter",
       "verify",
       "attention_fwd",
       tasks / "attention_fwd" / "starter.cu",
       {"1x2x128x64_full", "2x1x128x128_causal"}},
      {"rmsnorm-baseline-as-candidate",
       "verify",
       "rmsnorm",
       tasks / "rmsnorm" / "baseline.cu",
       {}}};
  const auto outcomes = testing::run_jobs(sim_run(), jobs);
  for (size_t i = 0; i < jobs.size(); ++i) {
    SCOPED_TRACE(jobs[i].name);
    const Outcome& o = outcomes[i];
    ASSERT_TRUE(o.problem.empty()) << brief(o);
    EXPECT_EQ(o.result.value("status", ""), "passed") << brief(o);
    EXPECT_TRUE(failed_gates(o.result).empty()) << o.result.dump(1).substr(0, 3000);
    // Every sim workload ran (the task's sim_workloads stand in for its workloads).
    EXPECT_TRUE(any_note_has(o.result, "sim_workloads stand in")) << o.result["notes"].dump();
    EXPECT_GE(o.result["workloads"].size(),
              jobs[i].workloads.empty() ? 4u : jobs[i].workloads.size());
    for (const auto& row : o.result["workloads"]) EXPECT_TRUE(row.value("passed", false)) << row;
    // The correctness gates ran; what needs CUPTI did not, so nothing here can be scored.
    for (const char* gate :
         {"correctness", "cuda_errors", "poisoned_outputs", "fresh_inputs", "input_checksum",
          "guard_bands", "determinism", "banned_symbols", "harness_state", "candidate_process"})
      EXPECT_EQ(gate_state(o.result, gate), "passed") << gate;
    for (const char* gate : {"activity_record", "hidden_stream_work", "device_memory"})
      EXPECT_EQ(gate_state(o.result, gate), "not_run") << gate;
  }
  // fp16_gemm's baseline links cuBLAS, which has no simulated form: its GPU reference stands in.
  EXPECT_TRUE(any_note_has(outcomes[0].result, "GPU reference stands in for its baseline"));
  EXPECT_FALSE(any_note_has(outcomes[1].result, "GPU reference stands in"));
  // attention_fwd's baseline is kiln's own wgmma kernel: the simulator runs it as it is.
  EXPECT_FALSE(any_note_has(outcomes[2].result, "GPU reference stands in"));
}

// grouped_gemm_fp8: a group_index input (fixed by the dims, never perturbed) and output rows
// outside the contract (I = -1): the starter writes them as zeros, the GPU reference (standing
// in for the cuBLASLt baseline) too, and no gate counts them, poisoned or not.
TEST(WorkerSim, GroupedGemmFp8StarterPassesEveryGateTheSimulatorRuns) {
  const auto starter = testing::source_dir() / "tasks" / "grouped_gemm_fp8" / "starter.cu";
  const Outcome o = testing::run_job(
      sim_run(), {"grouped_gemm_fp8-starter", "verify", "grouped_gemm_fp8", starter, {}});
  ASSERT_TRUE(o.problem.empty()) << brief(o);
  EXPECT_EQ(o.result.value("status", ""), "passed") << brief(o);
  EXPECT_TRUE(failed_gates(o.result).empty()) << o.result.dump(1).substr(0, 3000);
  EXPECT_EQ(o.result["workloads"].size(), 3u);
  // G*M x N of each sim workload: only the contract rows are compared, so fewer.
  const std::map<std::string, int64_t> elements = {{"g2_m128_n128_k256", 2 * 128 * 128},
                                                   {"g2_m200_n128_k384", 2 * 200 * 128},
                                                   {"g3_m96_n256_k256", 3 * 96 * 256}};
  for (const auto& row : o.result["workloads"]) {
    EXPECT_TRUE(row.value("passed", false)) << row;
    const int64_t checked = row["errors"].value("checked", int64_t{0});
    EXPECT_GT(checked, 0) << row;
    EXPECT_LT(checked, elements.at(row.value("name", ""))) << row;
  }
  for (const char* gate :
       {"correctness", "cuda_errors", "poisoned_outputs", "fresh_inputs", "input_checksum",
        "guard_bands", "determinism", "banned_symbols", "harness_state", "candidate_process"})
    EXPECT_EQ(gate_state(o.result, gate), "passed") << gate;
  EXPECT_TRUE(any_note_has(o.result, "GPU reference stands in for its baseline"));
}

TEST(WorkerSim, AJobThatNeedsAGpuIsRefusedAndSaysWhere) {
  const auto starter = testing::source_dir() / "tasks" / "rmsnorm" / "starter.cu";
  for (const char* kind : {"benchmark", "profile", "sanitize"}) {
    SCOPED_TRACE(kind);
    const Outcome o =
        testing::run_job(sim_run(), {std::string("refused-") + kind, kind, "rmsnorm", starter, {}});
    ASSERT_TRUE(o.problem.empty()) << brief(o);
    EXPECT_EQ(o.result.value("status", ""), "error");
    EXPECT_NE(o.result.value("error", "")
                  .find("verifies candidates on the CPU simulator but "
                        "does not time them"),
              std::string::npos)
        << o.result.value("error", "");
    EXPECT_NE(o.result.value("error", "").find("Point KILN_RUNNER at a runner with kiln-worker"),
              std::string::npos);
    // Named, so a runner's result check passes the refusal on rather than rejecting it.
    EXPECT_EQ(o.result["task"].value("name", ""), "rmsnorm") << o.result.dump();
    EXPECT_FALSE(o.result.value("candidate_sha256", "").empty()) << o.result.dump();
  }
}

}  // namespace
}  // namespace kiln::worker
