// kiln-sim-run as the simulate tool will call it: the task starters pass at their
// sim_workloads; wrong, misconfigured and faulting candidates are told apart in the report.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

struct SimRunResult {
  int exit_code = -1;
  nlohmann::json report;
};

std::string read_all(FILE* pipe) {
  std::string output;
  char buffer[4096];
  while (pipe != nullptr && std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  return output;
}

// stdout of kiln-sim-run with `args` (which may end in a pipe).
std::string sim_output(const std::string& args) {
  FILE* pipe = popen((std::string(KILN_SIM_RUN) + " " + args + " 2>/dev/null").c_str(), "r");
  std::string output = read_all(pipe);
  if (pipe != nullptr) pclose(pipe);
  return output;
}

SimRunResult sim_run(const std::string& args) {
  const std::string command = std::string(KILN_SIM_RUN) + " " + args + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  const std::string output = read_all(pipe);
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
  const SimRunResult run =
      sim_run("--task " + task("fp16_gemm") + " --source " + task("fp16_gemm") +
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

// The worker checks every element against the task's GPU reference once it agreed with the CPU
// reference; in the simulator it agrees exactly (the same double-precision operations in the
// same order), on every sim workload, odd shapes included.
TEST(SimRun, Fp16GemmGpuReferenceEqualsTheCpuReferenceExactly) {
  const SimRunResult run =
      sim_run("--task " + task("fp16_gemm") + " --source " + task("fp16_gemm") +
              "/gpu_reference.cu --build-dir " + build_dir("gemm_gpu_reference"));
  ASSERT_FALSE(run.report.is_discarded());
  EXPECT_EQ(run.exit_code, 0) << run.report.dump(2);
  ASSERT_EQ(run.report["workloads"].size(), 4u);
  for (const auto& workload : run.report["workloads"]) {
    SCOPED_TRACE(workload.value("workload", ""));
    EXPECT_EQ(workload["status"], "pass") << workload.dump(2);
    EXPECT_GT(workload["errors"]["checked"].get<int64_t>(), 0);
    EXPECT_EQ(workload["errors"]["max_abs"].get<double>(), 0.0);
    EXPECT_EQ(workload["errors"]["mismatches"].get<int64_t>(), 0);
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
  const SimRunResult run =
      sim_run("--task " + task("fp16_gemm") + " --candidate " + KILN_SIMRT_WRONG_GEMM_0 +
              " --workload 64x64x64 --build-dir " + build_dir("wrong0"));
  ASSERT_FALSE(run.report.is_discarded());
  EXPECT_EQ(run.exit_code, 1);
  const auto& workload = run.report["workloads"][0];
  EXPECT_EQ(workload["status"], "wrong_answer") << workload.dump(2);
  EXPECT_GT(workload["errors"]["mismatches"].get<int64_t>(), 0);
  EXPECT_FALSE(workload["errors"]["first_mismatches"].empty());
}

TEST(SimRun, TooMuchSharedMemoryIsALaunchErrorThatSaysWhatToDo) {
  const SimRunResult run =
      sim_run("--task " + task("fp16_gemm") + " --candidate " + KILN_SIMRT_WRONG_GEMM_1 +
              " --workload 64x64x64 --build-dir " + build_dir("wrong1"));
  ASSERT_FALSE(run.report.is_discarded());
  const auto& workload = run.report["workloads"][0];
  EXPECT_EQ(workload["status"], "launch_error") << workload.dump(2);
  EXPECT_NE(workload["message"].get<std::string>().find("cudaFuncSetAttribute"), std::string::npos);
}

TEST(SimRun, OutOfBoundsWriteIsAFaultWithItsLocation) {
  const SimRunResult run =
      sim_run("--task " + task("fp16_gemm") + " --candidate " + KILN_SIMRT_WRONG_GEMM_2 +
              " --workload 64x64x64 --build-dir " + build_dir("wrong2"));
  ASSERT_FALSE(run.report.is_discarded());
  const auto& workload = run.report["workloads"][0];
  EXPECT_EQ(workload["status"], "fault") << workload.dump(2);
  ASSERT_FALSE(workload["faults"].empty());
  EXPECT_EQ(workload["faults"][0]["kind"], "out_of_bounds");
}

// stderr of kiln-sim-run with `args` (its stdout discarded).
std::string sim_stderr(const std::string& args) {
  FILE* pipe = popen((std::string(KILN_SIM_RUN) + " " + args + " 2>&1 >/dev/null").c_str(), "r");
  std::string output = read_all(pipe);
  if (pipe != nullptr) pclose(pipe);
  return output;
}

TEST(SimRun, DevicePrintfComesBackPerWorkloadAndNeverOnStdout) {
  const std::string args = "--task " + task("fp16_gemm") + " --candidate " +
                           KILN_SIMRT_WRONG_GEMM_3 + " --workload 64x64x64 --build-dir " +
                           build_dir("printing");
  const SimRunResult run = sim_run(args);
  ASSERT_FALSE(run.report.is_discarded()) << "stdout is not one JSON report";
  EXPECT_EQ(run.exit_code, 0) << run.report.dump(2);
  const auto& workload = run.report["workloads"][0];
  EXPECT_EQ(workload["status"], "pass") << workload.dump(2);
  // 64x64 in 16x16 blocks: a 4x4 grid; the simulator runs blocks x-fastest.
  std::string expect;
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x)
      expect +=
          "block (" + std::to_string(x) + "," + std::to_string(y) + ") of (4,4): M=64 N=64 K=64\n";
  EXPECT_EQ(workload["printf_output"], expect);
  EXPECT_EQ(workload["printf_dropped_bytes"], 0);
  // The candidate's stdout is kiln-sim-run's stderr: the text is there, as CUDA prints it.
  EXPECT_NE(sim_stderr(args).find(expect), std::string::npos);
  // With --progress every stdout line is still JSON.
  const std::string lines = sim_output(args + " --progress");
  size_t start = 0, count = 0;
  while (start < lines.size()) {
    const size_t end = lines.find('\n', start);
    EXPECT_FALSE(
        nlohmann::json::parse(lines.substr(start, end - start), nullptr, false).is_discarded())
        << lines.substr(start, end - start);
    ++count;
    start = end == std::string::npos ? lines.size() : end + 1;
  }
  EXPECT_EQ(count, 3u);
}

TEST(SimRun, ProgressPrintsOneJsonLinePerStepThenTheReport) {
  const SimRunResult run = sim_run("--task " + task("rmsnorm") + " --source " + task("rmsnorm") +
                                   "/starter.cu --workload 1x8 --workload 3x40 --progress "
                                   "--build-dir " +
                                   build_dir("progress") + " | tail -n 1");
  ASSERT_FALSE(run.report.is_discarded());
  EXPECT_EQ(run.report["passed"], 2);
  const std::string lines =
      sim_output("--task " + task("rmsnorm") + " --source " + task("rmsnorm") +
                 "/starter.cu --workload 1x8 --progress "
                 "--build-dir " +
                 build_dir("progress"));
  std::vector<nlohmann::json> parsed;
  size_t start = 0;
  while (start < lines.size()) {
    const size_t end = lines.find('\n', start);
    parsed.push_back(nlohmann::json::parse(lines.substr(start, end - start)));
    start = end == std::string::npos ? lines.size() : end + 1;
  }
  ASSERT_EQ(parsed.size(), 3u) << lines;
  EXPECT_EQ(parsed[0]["event"], "built");
  EXPECT_EQ(parsed[1]["event"], "workload");
  EXPECT_EQ(parsed[1]["workload"], "1x8");
  EXPECT_EQ(parsed[1]["pass"], true);
  EXPECT_EQ(parsed[2]["passed"], 1);
}

TEST(SimRun, UnknownWorkloadIsRefusedWithTheKnownNames) {
  const SimRunResult run =
      sim_run("--task " + task("rmsnorm") + " --source " + task("rmsnorm") +
              "/starter.cu --workload 9x9 --build-dir " + build_dir("unknown"));
  EXPECT_EQ(run.exit_code, 2);
  ASSERT_FALSE(run.report.is_discarded());
  EXPECT_EQ(run.report["stage"], "workloads");
  EXPECT_NE(run.report["error"].get<std::string>().find("3x40"), std::string::npos);
}

TEST(SimRun, DimsRunAnAdHocShapeNamedByItsValuesInTheTasksDimOrder) {
  const SimRunResult run = sim_run("--task " + task("rmsnorm") + " --source " + task("rmsnorm") +
                                   "/starter.cu --dims H=96,T=5 --build-dir " + build_dir("dims"));
  ASSERT_FALSE(run.report.is_discarded());
  EXPECT_EQ(run.exit_code, 0) << run.report.dump(2);
  ASSERT_EQ(run.report["total"], 1);
  EXPECT_EQ(run.report["workloads"][0]["workload"], "5x96");
  EXPECT_EQ(run.report["workloads"][0]["status"], "pass");
}

TEST(SimRun, DimsNotMatchingTheTaskAreRefusedWithItsDims) {
  for (const std::string dims : {"T=4", "T=4,H=8,K=2", "T=4,H=0"}) {
    const SimRunResult run = sim_run("--task " + task("rmsnorm") + " --candidate " +
                                     KILN_SIMRT_WRONG_GEMM_0 + " --dims " + dims);
    EXPECT_EQ(run.exit_code, 2) << dims;
    ASSERT_FALSE(run.report.is_discarded()) << dims;
    EXPECT_EQ(run.report["stage"], "workloads");
    const std::string error = run.report["error"].get<std::string>();
    EXPECT_NE(error.find(dims == "T=4,H=0" ? ">= 1" : "has dims T, H"), std::string::npos) << error;
  }
}

TEST(SimRun, DimsAboveTheCapAreRefusedPointingAtBenchmark) {
  const SimRunResult run = sim_run("--task " + task("fp16_gemm") + " --candidate " +
                                   KILN_SIMRT_WRONG_GEMM_0 + " --dims M=4096,N=4096,K=4096");
  EXPECT_EQ(run.exit_code, 2);
  ASSERT_FALSE(run.report.is_discarded());
  const std::string error = run.report["error"].get<std::string>();
  EXPECT_NE(error.find("cap"), std::string::npos) << error;
  EXPECT_NE(error.find("benchmark"), std::string::npos) << error;
}

TEST(SimRun, InstructionBudgetStopsALaunchAsAFault) {
  const SimRunResult run =
      sim_run("--task " + task("fp16_gemm") + " --candidate " + KILN_SIMRT_WRONG_GEMM_0 +
              " --workload 64x64x64 --instruction-budget 10 --build-dir " + build_dir("budget"));
  ASSERT_FALSE(run.report.is_discarded());
  const auto& workload = run.report["workloads"][0];
  EXPECT_EQ(workload["status"], "fault") << workload.dump(2);
  ASSERT_FALSE(workload["faults"].empty());
  EXPECT_EQ(workload["faults"][0]["kind"], "budget");
}

TEST(SimRun, BadArgumentsAreRefusedWithUsage) {
  const SimRunResult run = sim_run("--task " + task("fp16_gemm"));
  EXPECT_EQ(run.exit_code, 2);
  ASSERT_FALSE(run.report.is_discarded());
  EXPECT_EQ(run.report["ok"], false);
}

}  // namespace
