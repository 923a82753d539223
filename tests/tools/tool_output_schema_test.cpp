// Every tool the toolbox registers (with --test-tools), called for at least one success and one
// failure: structuredContent is there and validates against the tool's own outputSchema (kiln's
// validator), an isError result carries the shared error object with the expected code and its
// text says the error's message and next step, and a success carries no error. A tool that is
// registered without cases here fails the test. The GPU tools run against the fake runner.
#include <gmock/gmock.h>

#include <map>
#include <set>
#include <vector>

#include "kb_fixture.h"
#include "kiln/frontier/worktree.h"
#include "kiln/mcp/long_call.h"
#include "kiln/mcp/schema_validator.h"
#include "kiln/mcp/tool_registry.h"
#include "tool_fixture.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;
using ::testing::HasSubstr;

// One call of a tool: its arguments, and the error code it must fail with ("" for a success).
struct Case {
  std::string what;
  json arguments;
  std::string error_code;
  bool background = false;  // called as a session calls (a long tool may answer "running")
};

// The jobs the wait_job cases ask for: one that finished, one still at work.
struct Jobs {
  std::string finished;
  std::string running;
};

const char* const kNotCpp = "this is not C++ at all\n";

// __syncthreads under a thread-dependent branch: synccheck's static engine finds it.
const char* const kDivergentBarrier = R"(#include "kiln/abi.h"
__global__ void k(float* x) {
  if (threadIdx.x < 16) __syncthreads();
  x[threadIdx.x] = 0.0f;
}
extern "C" int kiln_launch(const kiln_tensor* t, int, const kiln_scalar*, int, cudaStream_t s) {
  k<<<1, 32, 0, s>>>(static_cast<float*>(t[2].data));
  return 0;
}
)";

class ToolOutputSchemaTest : public ToolTest {
 protected:
  void SetUp() override {
    if (!KILN_TEST_HAVE_NVCC) GTEST_SKIP() << "no CUDA toolkit: compile and simulate cannot pass";
#ifndef KILN_SIM_RUN
    GTEST_SKIP() << "no kiln-sim-run: simulate cannot pass";
#endif
    kb_ = kb::testing::make_fixture(kb_root_.path());
    kiln::testing::write_text(
        run_dir_ / "worktree" / "candidates" / "fp16_gemm" / "scratch" / "kernel.cu",
        "// starter\n");
    ASSERT_TRUE(frontier::Worktree(run_dir_ / "worktree").init("run").ok());
  }
  void configure(tools::ToolboxConfig& config) override {
    config.test_tools = true;
    config.kb_dir = kb_.kb_dir;
    config.kb_cache_dir = kb_.cache_dir;
    config.compile_cache_dir = cache_.path();
    config.ptx_hasher = std::make_shared<FixedPtx>();
#ifdef KILN_SIM_RUN
    config.sim_runner = KILN_SIM_RUN;
#endif
  }

  // The cases of every tool kiln registers; `result_id` is a passing full benchmark's.
  std::map<std::string, std::vector<Case>> cases(const std::string& result_id,
                                                 const Jobs& jobs) const {
    const std::string starter = std::string(KILN_TASKS_DIR) + "/fp16_gemm/starter.cu";
    const std::string sim_workload = bundled_task().sim_workloads.front().name;
    const json record = {{"result_id", result_id},
                         {"name", "kept"},
                         {"approach", "smem_tiling: 64x64"},
                         {"hypothesis", "tiles"},
                         {"reason", "faster"}};
    json unknown_record = record;
    unknown_record["result_id"] = "r-0123456789abcdef";
    unknown_record["name"] = "unknown";
    return {
        {"get_task",
         {{"the run's task", json::object(), ""},
          {"an unknown task", {{"name", "no_such_task"}}, "not_found"},
          {"a number for a name", {{"name", 7}}, "invalid_arguments"}}},
        {"search_zoo",
         {{"a query", {{"query", "transpose"}}, ""},
          {"an unknown technique", {{"technique", "no_such_technique"}}, "invalid_arguments"}}},
        {"read_zoo_entry",
         {{"an entry", {{"id", "transpose_smem"}}, ""},
          {"an unknown entry", {{"id", "no_such_entry"}}, "not_found"}}},
        {"read_ptx_spec",
         {{"a section", {{"section", "mbarrier:phase-parity"}}, ""},
          {"a query", {{"query", "mbarrier parity wait"}}, ""},
          {"an unknown section", {{"section", "mbarier"}}, "not_found"},
          {"nothing to look up", json::object(), "invalid_arguments"}}},
        {"compile",
         {{"the starter", {{"candidate", starter}}, ""},
          {"a compile error", {{"source", kNotCpp}}, "compile_error"},
          {"a flag off the allow-list",
           {{"candidate", starter}, {"flags", {"-rdc=true"}}},
           "invalid_arguments"},
          {"no candidate", json::object(), "invalid_arguments"}}},
        {"simulate",
         {{"the starter", {{"candidate", starter}, {"workloads", {sim_workload}}}, ""},
          {"outputs never written",
           {{"source", fake_source("pass")}, {"workloads", {sim_workload}}},
           "wrong_answer"},
          {"a compile error", {{"source", kNotCpp}}, "compile_error"},
          {"an unknown sim workload",
           {{"source", kNotCpp}, {"workloads", {"1x1x1"}}},
           "invalid_arguments"}}},
        {"synccheck",
         {{"clean", {{"candidate", starter}}, ""},
          {"findings are a success", {{"source", kDivergentBarrier}}, ""},
          {"gpu engine findings",
           {{"source", fake_source("sanitize_findings")}, {"engine", "gpu"}},
           ""},
          {"a compile error", {{"source", kNotCpp}}, "compile_error"},
          {"an unknown engine", {{"source", kNotCpp}, {"engine", "magic"}}, "invalid_arguments"}}},
        {"racecheck",
         {{"clean", {{"source", fake_source("pass")}}, ""},
          {"findings are a success", {{"source", fake_source("sanitize_findings")}}, ""},
          {"a build error on the runner",
           {{"source", fake_source("build_error")}},
           "compile_error"},
          {"an unknown task",
           {{"source", fake_source("pass")}, {"task", "no_such_task"}},
           "not_found"},
          {"sim engine, clean", {{"candidate", starter}, {"engine", "sim"}}, ""},
          {"sim engine, an unknown workload",
           {{"candidate", starter}, {"engine", "sim"}, {"workloads", {"1x1x1"}}},
           "invalid_arguments"}}},
        {"benchmark",
         {{"a passing candidate", {{"source", fake_source("pass")}}, ""},
          {"a failing workload", {{"source", fake_source("fail")}}, "wrong_answer"},
          {"a build error", {{"source", fake_source("build_error")}}, "compile_error"},
          {"an unknown workload",
           {{"source", fake_source("pass")}, {"workloads", {"1x1x1"}}},
           "not_found"}}},
        {"profile",
         {{"a passing candidate", {{"source", fake_source("pass")}}, ""},
          {"a build error", {{"source", fake_source("build_error")}}, "compile_error"},
          {"an unknown workload",
           {{"source", fake_source("pass")}, {"workload", "1x1x1"}},
           "not_found"}}},
        {"record_candidate",
         {{"a passing full benchmark", record, ""},
          {"a result kiln never stored", unknown_record, "refused"},
          {"numbers from the agent",
           {{"result_id", result_id}, {"geomean", 9.0}},
           "invalid_arguments"}}},
        {"list_frontier",
         {{"the frontier", json::object(), ""},
          {"a zero limit", {{"limit", 0}}, "invalid_arguments"}}},
        {"test_wait",
         {{"no wait", {{"duration_ms", 0}, {"steps", 1}}, ""},
          {"no steps", {{"duration_ms", 0}}, "invalid_arguments"},
          {"running past wait_s",
           {{"duration_ms", 60000}, {"steps", 1}, {"wait_s", 0}},
           "",
           true}}},
        {"wait_job",
         {{"a finished job", {{"job_id", jobs.finished}, {"wait_s", 30}}, ""},
          {"a job still at work", {{"job_id", jobs.running}, {"wait_s", 0}}, ""},
          {"an unknown job", {{"job_id", "job-0123456789abcdef"}}, "not_found"},
          {"not a job id", {{"job_id", "r-1"}}, "invalid_arguments"}}},
    };
  }

  // Calls one case and checks everything the contract promises about its result.
  void check(const json& tool, const Case& c) {
    const std::string name = tool["name"];
    SCOPED_TRACE(name + ": " + c.what);
    const mcp::ToolResult result = call(name, c.arguments, c.background);
    const json wire = mcp::to_call_result(result);
    ASSERT_TRUE(wire.contains("structuredContent")) << wire.dump();
    const json& structured = wire["structuredContent"];
    ASSERT_TRUE(structured.is_object());
    auto problem = mcp::validate_against_schema(tool["outputSchema"], structured);
    EXPECT_FALSE(problem.has_value()) << problem.value_or("") << "\n" << structured.dump();
    EXPECT_EQ(wire["isError"], !c.error_code.empty()) << result.text;
    if (c.error_code.empty()) {
      EXPECT_FALSE(structured.contains("error")) << structured.dump();
      return;
    }
    ASSERT_TRUE(structured.contains("error")) << structured.dump();
    const json& error = structured["error"];
    EXPECT_EQ(error.value("code", ""), c.error_code) << result.text;
    EXPECT_THAT(result.text, HasSubstr(error.value("message", "?")));
    EXPECT_THAT(result.text, HasSubstr(error.value("next_step", "?")));
  }

  kiln::testing::TempDir kb_root_;
  kiln::testing::TempDir cache_;
  kb::KbPaths kb_;
};

TEST_F(ToolOutputSchemaTest, EveryToolsSuccessesAndFailuresMatchItsOutputSchema) {
  start();
  auto benchmark = call("benchmark", {{"source", fake_source("pass") + "// recorded\n"}});
  ASSERT_TRUE(benchmark.structured.contains("result_id")) << benchmark.text;
  Jobs jobs;
  for (auto [id, ms] : {std::pair{&jobs.finished, 200}, std::pair{&jobs.running, 60000}}) {
    auto running = call("test_wait", {{"duration_ms", ms}, {"steps", 1}, {"wait_s", 0}}, true);
    ASSERT_EQ(running.structured.value("status", ""), "running") << running.text;
    *id = running.structured["job_id"];
  }
  const auto all = cases(benchmark.structured["result_id"], jobs);
  const json tools = server_.tools().list()["tools"];
  ASSERT_GE(tools.size(), all.size());
  for (const auto& tool : tools) {
    const std::string name = tool["name"];
    auto found = all.find(name);
    if (found == all.end()) {
      ADD_FAILURE() << "tool `" << name
                    << "` has no cases here: add a success and a failure to "
                       "ToolOutputSchemaTest::cases";
      continue;
    }
    size_t successes = 0, failures = 0;
    for (const Case& c : found->second) (c.error_code.empty() ? successes : failures) += 1;
    EXPECT_GE(successes, 1u) << name << " needs a successful case";
    EXPECT_GE(failures, 1u) << name << " needs a failing case";
    for (const Case& c : found->second) check(tool, c);
  }
}

// Without a runner the GPU tools cannot do their work: an isError result with code no_runner,
// valid against each schema.
TEST_F(ToolOutputSchemaTest, WithoutARunnerTheGpuToolsSayNoRunnerInTheirSchema) {
  start(false);
  const json tools = server_.tools().list()["tools"];
  for (const auto& tool : tools) {
    const std::string name = tool["name"];
    if (name == "benchmark" || name == "profile")
      check(tool, {"no runner", {{"source", fake_source("pass")}}, "no_runner"});
    if (name == "racecheck")  // its default engine without a runner is sim
      check(tool, {"no runner", {{"source", fake_source("pass")}, {"engine", "gpu"}}, "no_runner"});
  }
}

// The tools whose work can outlast a client's timeout take wait_s, and their outputSchema admits
// the running answer (status "running", job_id, next_call) that they give past it; so does
// wait_job's, which gives the same answer while the work goes on.
TEST_F(ToolOutputSchemaTest, EveryLongToolsSchemaAdmitsTheRunningAnswer) {
  start();
  std::set<std::string> long_tools;
  const json tools = server_.tools().list()["tools"];
  for (const auto& tool : tools) {
    if (!tool["inputSchema"]["properties"].contains("wait_s")) continue;
    const std::string name = tool["name"];
    long_tools.insert(name);
    mcp::JobStatus status;
    status.id = "job-0123456789abcdef";
    status.tool = name;
    status.elapsed_s = 45.2;
    const json running = mcp::to_call_result(mcp::job_answer(status))["structuredContent"];
    auto problem = mcp::validate_against_schema(tool["outputSchema"], running);
    EXPECT_FALSE(problem.has_value()) << name << ": " << problem.value_or("") << "\n"
                                      << running.dump();
  }
  EXPECT_EQ(long_tools, (std::set<std::string>{"benchmark", "profile", "racecheck", "simulate",
                                               "synccheck", "test_wait", "wait_job"}));
}

}  // namespace
}  // namespace kiln::runner
