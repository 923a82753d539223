// `kiln task new` and `kiln task check` from the outside, on the CPU: the bundled tasks' sim part
// (one sim workload each, to keep the suite short), a filled-in scaffold, and a task whose
// tolerance is so loose that a wrong candidate passes, which check must flag (exit 3).
#include <gmock/gmock.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/run_program.h"
#include "support/temp_dir.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using kiln::testing::Ran;
using kiln::testing::read_text;
using kiln::testing::TempDir;
using kiln::testing::write_text;
using ::testing::HasSubstr;

Ran kiln(const std::vector<std::string>& args, const fs::path& cwd) {
  std::vector<std::string> argv = {KILN_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  kiln::testing::RunOptions options;
  options.cwd = cwd;
  options.env = {{"KILN_RUNNER", ""}, {"KILN_TASKS_DIR", KILN_TASKS_DIR}};
  options.timeout = std::chrono::seconds(280);
  return kiln::testing::run_program(std::move(argv), options);
}

// The state of each step of a report, by id.
std::map<std::string, std::string> states(const fs::path& report) {
  std::map<std::string, std::string> out;
  const json j = json::parse(read_text(report));
  for (const auto& step : j["steps"]) out[step["id"]] = step["state"];
  return out;
}

class TaskCheckTest : public ::testing::Test {
 protected:
  Ran check(const std::string& task, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"task",
                                     "check",
                                     task,
                                     "--work-dir",
                                     (dir_ / "work").string(),
                                     "--report-dir",
                                     (dir_ / "report").string()};
    args.insert(args.end(), more.begin(), more.end());
    return kiln(args, dir_.path());
  }
  std::map<std::string, std::string> report_states() {
    return states(dir_ / "report" / "report.json");
  }
  TempDir dir_;
};

TEST_F(TaskCheckTest, RmsnormPassesTheSimPartAndEveryNegativeTestAndReportsTheGpuPartNotRun) {
  if (fs::exists("/dev/nvidia0")) GTEST_SKIP() << "a GPU is here: this test is the no-GPU path";
  Ran ran = check("rmsnorm", {"--sim-workload", "3x40"});
  ASSERT_EQ(ran.code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("not run (no GPU)"));
  EXPECT_THAT(ran.out, HasSubstr("freeze: sha256 "));
  auto s = report_states();
  for (const char* id : {"load", "template", "build_reference", "build_baseline", "build_starter",
                         "negative_compile", "sim_starter", "sim_negative:perturb_one[y]",
                         "sim_negative:drop_tail[y]", "sim_negative:unwritten"})
    EXPECT_EQ(s[id], "passed") << id;
  EXPECT_EQ(s["gpu_benchmark:starter"], "not_run");
  EXPECT_EQ(s["gpu_negative:perturb_one[y]"], "not_run");
  EXPECT_TRUE(fs::exists(dir_ / "report" / "report.txt"));
}

TEST_F(TaskCheckTest, Fp16GemmPassesTheSimPartAndEveryNegativeTest) {
  Ran ran = check("fp16_gemm", {"--sim-workload", "33x17x40", "--no-gpu"});
  ASSERT_EQ(ran.code, 0) << ran.out << ran.err;
  auto s = report_states();
  for (const char* id :
       {"build_gpu_reference", "negative_compile", "sim_starter", "sim_negative:perturb_one[C]",
        "sim_negative:drop_tail[C]", "sim_negative:unwritten"})
    EXPECT_EQ(s[id], "passed") << id;
  EXPECT_EQ(s["gpu_stability"], "not_run");
  EXPECT_THAT(ran.out, HasSubstr("--no-gpu"));
}

// The grouped FP8 task forgives a mismatch fraction and leaves padding rows (I = -1) outside
// the contract: its negatives must spoil rows in the contract (its last row is padding) and
// reach past the fraction, by count (perturb_fraction) and by distance (perturb_one).
TEST_F(TaskCheckTest, GroupedFp8RefusesEveryNegativeDespiteItsPaddingRowsAndMismatchFraction) {
  Ran ran = check("grouped_gemm_fp8", {"--sim-workload", "g2_m128_n128_k256", "--no-gpu"});
  ASSERT_EQ(ran.code, 0) << ran.out << ran.err;
  auto s = report_states();
  for (const char* id :
       {"sim_starter", "sim_negative:perturb_one[D]", "sim_negative:perturb_fraction[D]",
        "sim_negative:drop_tail[D]", "sim_negative:unwritten"})
    EXPECT_EQ(s[id], "passed") << id;
}

TEST_F(TaskCheckTest, ATaskWhoseToleranceLetsAPerturbedElementThroughIsFlagged) {
  const fs::path loose = dir_ / "loose_rms";
  fs::copy(fs::path(KILN_TASKS_DIR) / "rmsnorm", loose, fs::copy_options::recursive);
  std::string task = read_text(loose / "task.json");
  task.replace(task.find("\"rmsnorm\""), 9, "\"loose_rms\"");
  const std::string tolerance = "\"atol\": 0.001, \"rtol\": 0.01";
  ASSERT_NE(task.find(tolerance), std::string::npos);
  // Beyond bf16's range (3.4e38): no finite output value is outside it. (At 1e30 kiln still
  // finds a bf16 value beyond the tolerance, and refuses the perturbed candidate.)
  task.replace(task.find(tolerance), tolerance.size(), "\"atol\": 1e39, \"rtol\": 1e39");
  write_text(loose / "task.json", task);

  Ran ran = check(loose.string(), {"--sim-workload", "3x40", "--no-gpu"});
  EXPECT_EQ(ran.code, 3) << ran.out << ran.err;
  EXPECT_THAT(ran.err, HasSubstr("FLAGGED"));
  EXPECT_THAT(ran.out, HasSubstr("FLAGGED: task loose_rms let a wrong candidate through"));
  auto s = report_states();
  EXPECT_EQ(s["sim_starter"], "passed");
  EXPECT_EQ(s["sim_negative:perturb_one[y]"], "flagged");
  // Poison is NaN, which must match exactly whatever the tolerance: those are still refused.
  EXPECT_EQ(s["sim_negative:drop_tail[y]"], "passed");
  EXPECT_EQ(s["sim_negative:unwritten"], "passed");
}

TEST_F(TaskCheckTest, TheScaffoldFailsItsTemplateStepUntilFilledInThenPasses) {
  Ran made = kiln({"task", "new", "my_scale", "--dir", dir_.path().string()}, dir_.path());
  ASSERT_EQ(made.code, 0) << made.err;
  const fs::path bundle = dir_ / "my_scale";
  Ran unfilled = check(bundle.string(), {"--no-gpu"});
  EXPECT_EQ(unfilled.code, 1) << unfilled.out;
  EXPECT_EQ(report_states()["template"], "failed");
  EXPECT_EQ(report_states()["sim_negative:perturb_one[y]"], "passed");

  for (const char* file : {"task.json", "README.md"}) {
    std::string text = read_text(bundle / file);
    for (size_t at = text.find("TODO"); at != std::string::npos; at = text.find("TODO"))
      text.replace(at, 4, "Done");
    write_text(bundle / file, text);
  }
  Ran filled = check(bundle.string(), {"--no-gpu"});
  EXPECT_EQ(filled.code, 0) << filled.out;
  EXPECT_EQ(report_states()["template"], "passed");
}

TEST_F(TaskCheckTest, NewLikeAndFromMakeABundleThatLoads) {
  write_text(dir_ / "mine.cu",
             read_text(fs::path(KILN_TASKS_DIR) / "fp16_gemm" / "starter.cu") + "// my variant\n");
  Ran made = kiln({"task", "new", "my_gemm", "--like", "fp16_gemm", "--from",
                   (dir_ / "mine.cu").string(), "--dir", dir_.path().string()},
                  dir_.path());
  ASSERT_EQ(made.code, 0) << made.err;
  EXPECT_THAT(read_text(dir_ / "my_gemm" / "starter.cu"), HasSubstr("// my variant"));
  Ran listed = kiln({"--tasks-dir", dir_.path().string(), "tasks", "list"}, dir_.path());
  EXPECT_THAT(listed.out, HasSubstr("my_gemm\tTODO (copied from fp16_gemm)"));
  Ran again = kiln({"task", "new", "my_gemm", "--dir", dir_.path().string()}, dir_.path());
  EXPECT_EQ(again.code, 1);
  EXPECT_THAT(again.err, HasSubstr("already exists"));
}

TEST_F(TaskCheckTest, ABundleThatDoesNotLoadFailsAtTheLoaderWithItsMessage) {
  fs::create_directories(dir_ / "bad");
  write_text(dir_ / "bad" / "task.json", "{\"name\": \"bad\"}");
  Ran ran = check((dir_ / "bad").string(), {"--no-gpu"});
  EXPECT_EQ(ran.code, 1);
  EXPECT_EQ(report_states()["load"], "failed");
  EXPECT_THAT(ran.out, HasSubstr("task.json"));
}

}  // namespace
}  // namespace kiln::cli
