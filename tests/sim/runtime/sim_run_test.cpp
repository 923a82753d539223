// kiln-sim-run as the simulate tool will call it: the task starters pass at their
// sim_workloads; wrong, misconfigured and faulting candidates are told apart in the report.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct SimRunResult {
  int exit_code = -1;
  nlohmann::json report;
};

SimRunResult sim_run(const std::string& args) {
  const std::string command = std::string(KILN_SIM_RUN) + " " + args + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  char buffer[4096];
  while (pipe != nullptr && std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int status = pipe != nullptr ? pclose(pipe) : -1;
  SimRunResult run;
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.report = nlohmann::json::parse(output, nullptr, false);
  return run;
}

std::string task(const std::string& name) { return std::string(KILN_TASKS_DIR) + "/" + name; }

std::string build_dir(const std::string& name) {
  return std::string(KILN_SIMRT_BUILD) + "/sim_run_" + name;
}

TEST(SimRun, Fp16GemmStarterPassesEverySimWorkload) {
  const SimRunResult run = sim_run("--task " + task("fp16_gemm") + " --source " + task("fp16_gemm") +
                          "/starter.cu --build-dir " + build_dir("gemm_starter"));
  ASSERT_FALSE(run.report.is_discarded());
  EXPECT_EQ(run.exit_code, 0) << run.report.dump(2);
  EXPECT_EQ(run.report["passed"], 4);
  for (const auto& workload : run.report["workloads"]) {
    EXPECT_EQ(workload["status"], "pass") << workload.dump(2);
    ASSERT_FALSE(workload["launches"].empty());
    EXPECT_GT(workload["launches"][0]["stats"]["warp_instructions"].get<uint64_t>(), 0u);
  }
}

TEST(SimRun, RmsnormStarterPassesEverySimWorkload) {
  const SimRunResult run = sim_run("--task " + task("rmsnorm") + " --source " + task("rmsnorm") +
                          "/starter.cu --build-dir " + build_dir("rmsnorm_starter"));
  ASSERT_FALSE(run.report.is_discarded());
  EXPECT_EQ(run.exit_code, 0) << run.report.dump(2);
  EXPECT_EQ(run.report["passed"], 4);
}

TEST(SimRun, WrongAnswerIsReportedWithMismatches) {
  const SimRunResult run = sim_run("--task " + task("fp16_gemm") + " --candidate " +
                          KILN_SIMRT_WRONG_GEMM_0 + " --workload 64x64x64 --build-dir " +
                          build_dir("wrong0"));
  ASSERT_FALSE(run.report.is_discarded());
  EXPECT_EQ(run.exit_code, 1);
  const auto& workload = run.report["workloads"][0];
  EXPECT_EQ(workload["status"], "wrong_answer") << workload.dump(2);
  EXPECT_GT(workload["errors"]["mismatches"].get<int64_t>(), 0);
  EXPECT_FALSE(workload["errors"]["first_mismatches"].empty());
}

TEST(SimRun, TooMuchSharedMemoryIsALaunchErrorThatSaysWhatToDo) {
  const SimRunResult run = sim_run("--task " + task("fp16_gemm") + " --candidate " +
                          KILN_SIMRT_WRONG_GEMM_1 + " --workload 64x64x64 --build-dir " +
                          build_dir("wrong1"));
  ASSERT_FALSE(run.report.is_discarded());
  const auto& workload = run.report["workloads"][0];
  EXPECT_EQ(workload["status"], "launch_error") << workload.dump(2);
  EXPECT_NE(workload["message"].get<std::string>().find("cudaFuncSetAttribute"),
            std::string::npos);
}

TEST(SimRun, OutOfBoundsWriteIsAFaultWithItsLocation) {
  const SimRunResult run = sim_run("--task " + task("fp16_gemm") + " --candidate " +
                          KILN_SIMRT_WRONG_GEMM_2 + " --workload 64x64x64 --build-dir " +
                          build_dir("wrong2"));
  ASSERT_FALSE(run.report.is_discarded());
  const auto& workload = run.report["workloads"][0];
  EXPECT_EQ(workload["status"], "fault") << workload.dump(2);
  ASSERT_FALSE(workload["faults"].empty());
  EXPECT_EQ(workload["faults"][0]["kind"], "out_of_bounds");
}

TEST(SimRun, BadArgumentsAreRefusedWithUsage) {
  const SimRunResult run = sim_run("--task " + task("fp16_gemm"));
  EXPECT_EQ(run.exit_code, 2);
  ASSERT_FALSE(run.report.is_discarded());
  EXPECT_EQ(run.report["ok"], false);
}

}  // namespace
