// The candidate argument, the same in every tool that takes one (compile, simulate, synccheck,
// racecheck, benchmark, profile): `candidate` (a path) or `source` (inline), one schema fragment,
// the same refusals word for word, and the deprecated `path` of the four tools that had it.
#include <gmock/gmock.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tool_fixture.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const std::vector<std::string> kAllTools = {"compile",   "simulate",  "synccheck",
                                            "racecheck", "benchmark", "profile"};
const std::vector<std::string> kToolsThatHadPath = {"compile", "simulate", "synccheck",
                                                    "racecheck"};
constexpr const char* kNote = "`path` is deprecated";
constexpr const char* kScratch = "worktree/candidates/fp16_gemm/scratch/kernel.cu";

constexpr const char* kKernel = R"(#include "kiln/abi.h"
__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }
extern "C" int kiln_launch(const kiln_tensor* t, int, const kiln_scalar*, int, cudaStream_t s) {
  scale<<<1, 32, 0, s>>>(static_cast<float*>(t[0].data));
  return 0;
}
)";

class CandidateArgumentTest : public ToolTest {
 protected:
  void configure(tools::ToolboxConfig& config) override {
    config.compile_cache_dir = cache_.path();
#ifdef KILN_SIM_RUN
    config.sim_runner = KILN_SIM_RUN;
#endif
  }

  json input_schema(const std::string& tool) {
    const json list = server_.tools().list();
    for (const json& declared : list["tools"])
      if (declared["name"] == tool) return declared["inputSchema"];
    ADD_FAILURE() << tool << " is not declared";
    return json::object();
  }

  TempDir cache_;
};

TEST_F(CandidateArgumentTest, EveryToolDeclaresTheSameCandidateProperties) {
  start(false);
  const json reference = input_schema("compile")["properties"];
  ASSERT_TRUE(reference.contains("candidate") && reference.contains("source"));
  EXPECT_THAT(reference["path"]["description"].get<std::string>(),
              StartsWith("deprecated: use candidate"));
  for (const std::string& tool : kAllTools) {
    const json schema = input_schema(tool);
    EXPECT_EQ(schema["properties"]["candidate"].dump(), reference["candidate"].dump()) << tool;
    EXPECT_EQ(schema["properties"]["source"].dump(), reference["source"].dump()) << tool;
    // resolve_candidate wants exactly one of them, so the schema requires neither.
    for (const json& name : schema.value("required", json::array()))
      EXPECT_TRUE(name != "candidate" && name != "source" && name != "path") << tool;
    const bool had_path = std::find(kToolsThatHadPath.begin(), kToolsThatHadPath.end(), tool) !=
                          kToolsThatHadPath.end();
    if (had_path)
      EXPECT_EQ(schema["properties"]["path"].dump(), reference["path"].dump()) << tool;
    else
      EXPECT_FALSE(schema["properties"].contains("path")) << tool;
  }
}

TEST_F(CandidateArgumentTest, BadCandidatesAreRefusedWordForWordTheSameInEveryTool) {
  start(false);  // benchmark and profile refuse the candidate before they look for a runner
  kiln::testing::write_text(run_dir_ / "big.cu", std::string((1u << 20) + 1, ' '));
  kiln::testing::write_text(run_dir_ / "latin1.cu", "// caf\xe9\nextern \"C\" int x;\n");
  std::filesystem::create_directories(run_dir_ / "worktree");
  const std::vector<std::pair<json, std::string>> cases = {
      {json::object(), "pass exactly one of `candidate`"},
      {{{"candidate", "nope.cu"}}, "is not a file"},
      {{{"candidate", "worktree"}}, "is not a file"},
      {{{"candidate", "/etc/passwd"}}, "outside the run directory"},
      {{{"candidate", "big.cu"}}, "over 1 MiB"},
      {{{"candidate", "latin1.cu"}}, "is not UTF-8 text (line 1, byte 6)"},
      {{{"source", std::string((1u << 20) + 1, ' ')}}, "over 1 MiB"},
      {{{"candidate", "big.cu"}, {"source", "x"}}, "not both"}};
  for (const auto& [arguments, expected] : cases) {
    const std::string first = call(kAllTools.front(), arguments).text;
    EXPECT_THAT(first, HasSubstr(expected)) << arguments.dump().substr(0, 80);
    for (const std::string& tool : kAllTools) {
      auto result = call(tool, arguments);
      EXPECT_TRUE(result.is_error) << tool;
      EXPECT_EQ(result.text, first) << tool;
    }
  }
}

TEST_F(CandidateArgumentTest, TheOldNameGivesTheSameRefusalPlusTheDeprecationNote) {
  start(false);
  for (const std::string& tool : kToolsThatHadPath) {
    auto with_new = call(tool, {{"candidate", "nope.cu"}});
    auto with_old = call(tool, {{"path", "nope.cu"}});
    EXPECT_TRUE(with_old.is_error) << tool;
    const json& new_error = with_new.structured["error"];
    const json& old_error = with_old.structured["error"];
    EXPECT_THAT(old_error["message"].get<std::string>(),
                StartsWith(new_error["message"].get<std::string>() + "\n"))
        << tool;
    EXPECT_EQ(old_error["code"], new_error["code"]) << tool;
    EXPECT_EQ(old_error["next_step"], new_error["next_step"]) << tool;
    EXPECT_THAT(with_old.text, HasSubstr(kNote)) << tool;
    EXPECT_THAT(with_new.text, Not(HasSubstr(kNote))) << tool;
  }
  // A refusal after the candidate is known: simulate's unknown workload.
  kiln::testing::write_text(run_dir_ / kScratch, kKernel);
  auto with_new = call("simulate", {{"candidate", kScratch}, {"workloads", {"7x7x7"}}});
  auto with_old = call("simulate", {{"path", kScratch}, {"workloads", {"7x7x7"}}});
  EXPECT_THAT(with_new.text, HasSubstr("no sim_workload '7x7x7'"));
  EXPECT_THAT(with_old.text, StartsWith(with_new.text));
  EXPECT_THAT(with_old.text, HasSubstr(kNote));
}

TEST_F(CandidateArgumentTest, OldAndNewNamesThatDisagreeAreRefused) {
  start(false);
  for (const std::string& tool : kToolsThatHadPath) {
    auto disagree = call(tool, {{"candidate", "a.cu"}, {"path", "b.cu"}});
    EXPECT_TRUE(disagree.is_error) << tool;
    EXPECT_THAT(disagree.text, HasSubstr("keep `candidate` and drop `path`")) << tool;
    EXPECT_THAT(disagree.text, Not(HasSubstr(kNote))) << tool;  // it says so already
    // Agreeing names are one candidate: the refusal is about the file, not the names.
    auto agree = call(tool, {{"candidate", "nope.cu"}, {"path", "nope.cu"}});
    EXPECT_THAT(agree.text, HasSubstr("`nope.cu` is not a file")) << tool;
  }
}

TEST_F(CandidateArgumentTest, BenchmarkAndProfileNeverTookPath) {
  start(false);
  for (const char* tool : {"benchmark", "profile"}) {
    auto result = call(tool, {{"path", kScratch}});
    EXPECT_TRUE(result.is_error) << tool;
    EXPECT_THAT(result.text, HasSubstr("invalid arguments")) << tool;
  }
}

TEST_F(CandidateArgumentTest, GpuToolsRunTheCandidateItNames) {
  start();
  kiln::testing::write_text(run_dir_ / kScratch, fake_source("pass"));
  auto benchmark = call("benchmark", {{"candidate", kScratch}, {"workloads", {"16x4096x4096"}}});
  EXPECT_EQ(benchmark.structured["status"], "passed") << benchmark.text;
  auto profile = call("profile", {{"candidate", kScratch}});
  EXPECT_EQ(profile.structured["status"], "passed") << profile.text;
  // The task bundles are a root of every tool, benchmark's too.
  auto starter =
      call("benchmark", {{"candidate", std::string(KILN_TASKS_DIR) + "/fp16_gemm/starter.cu"},
                         {"workloads", {"16x4096x4096"}}});
  EXPECT_EQ(starter.structured["status"], "passed") << starter.text;

  for (const json& engine : {json{{"engine", "gpu"}}, json::object()}) {
    const std::string tool = engine.empty() ? "racecheck" : "synccheck";
    json with_new = engine, with_old = engine;
    with_new["candidate"] = kScratch;
    with_old["path"] = kScratch;
    auto by_new = call(tool, with_new);
    auto by_old = call(tool, with_old);
    EXPECT_EQ(by_new.structured["verdict"], "clean") << tool << by_new.text;
    EXPECT_EQ(by_old.structured["verdict"], "clean") << tool << by_old.text;
    EXPECT_THAT(by_new.text, Not(HasSubstr(kNote))) << tool;
    EXPECT_THAT(by_old.text, HasSubstr(kNote)) << tool;
    EXPECT_THAT(by_old.structured.dump(), Not(HasSubstr("deprecated"))) << tool;
  }
}

TEST_F(CandidateArgumentTest, CompileAndStaticSynccheckTakeBothNames) {
  if (!KILN_TEST_HAVE_NVCC) GTEST_SKIP() << "no CUDA toolkit";
  start(false);
  kiln::testing::write_text(run_dir_ / kScratch, kKernel);
  auto by_new = call("compile", {{"candidate", kScratch}});
  ASSERT_FALSE(by_new.is_error) << by_new.text;
  EXPECT_EQ(by_new.structured["file"], kScratch);
  auto by_old = call("compile", {{"path", kScratch}});
  ASSERT_FALSE(by_old.is_error) << by_old.text;
  for (const char* key : {"file", "arch", "kernels", "diagnostics", "key"})
    EXPECT_EQ(by_old.structured[key], by_new.structured[key]) << key;
  EXPECT_THAT(by_old.structured.dump(), Not(HasSubstr("deprecated")));
  EXPECT_THAT(by_new.text, Not(HasSubstr(kNote)));
  EXPECT_THAT(by_old.text, HasSubstr(kNote));

  auto check_new = call("synccheck", {{"candidate", kScratch}});
  auto check_old = call("synccheck", {{"path", kScratch}});
  EXPECT_EQ(check_new.structured["verdict"], "clean") << check_new.text;
  EXPECT_EQ(check_old.structured["verdict"], "clean") << check_old.text;
  EXPECT_THAT(check_old.text, HasSubstr(kNote));
}

#ifdef KILN_SIM_RUN
TEST_F(CandidateArgumentTest, SimulateRunsTheCandidateItNames) {
  if (!KILN_TEST_HAVE_NVCC) GTEST_SKIP() << "no CUDA toolkit";
  start(false);
  kiln::testing::write_text(
      run_dir_ / kScratch,
      kiln::testing::read_text(std::string(KILN_TASKS_DIR) + "/fp16_gemm/starter.cu"));
  auto result = call("simulate", {{"candidate", kScratch}, {"workloads", {"33x17x40"}}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["file"], kScratch);
  EXPECT_EQ(result.structured["passed"], 1);
  EXPECT_THAT(result.text, Not(HasSubstr(kNote)));
}
#endif

}  // namespace
}  // namespace kiln::runner
