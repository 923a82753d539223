// The wrong and broken candidates kiln writes from a starter: text only (the CLI tests compile
// and run them on the simulator).
#include "kiln/taskcheck/wrong_candidate.h"

#include <gmock/gmock.h>

#include <string>

#include "kiln/tasks/task.h"

namespace kiln::taskcheck {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char* kStarter =
    "#include \"kiln/abi.h\"\nextern \"C\" int kiln_launch(const kiln_tensor* t, int n, const "
    "kiln_scalar* s, int ns, cudaStream_t stream) { return 0; }";

tasks::Task two_output_task() {
  tasks::Task task;
  task.name = "pair";
  task.tensors = {{"x", "f32", {"N"}, false, {}},
                  {"a", "bf16", {"N"}, true, {}},
                  {"b", "i32", {"N"}, true, {}}};
  task.tolerance = {0.25, 0.5, 0};
  return task;
}

std::vector<std::string> names(const std::vector<WrongCandidate>& candidates) {
  std::vector<std::string> out;
  for (const auto& c : candidates) out.push_back(c.name);
  return out;
}

TEST(WrongCandidate, OnePerturbedAndOneDroppedTailPerOutputThenOneUnwritten) {
  EXPECT_THAT(
      names(wrong_candidates(two_output_task(), kStarter)),
      ElementsAre("perturb_one[a]", "perturb_one[b]", "drop_tail[a]", "drop_tail[b]", "unwritten"));
}

// A task that forgives a fraction of near misses: perturb_one lands beyond the near-miss bound,
// and perturb_fraction spoils one element more than the fraction.
TEST(WrongCandidate, AForgivingTaskGetsAFarPerturbationAndOneBeyondItsFraction) {
  tasks::Task task = two_output_task();
  task.tolerance.max_mismatch_fraction = 1e-3;
  EXPECT_THAT(names(wrong_candidates(task, kStarter)),
              ElementsAre("perturb_one[a]", "perturb_one[b]", "perturb_fraction[a]",
                          "perturb_fraction[b]", "drop_tail[a]", "drop_tail[b]", "unwritten"));
  const WrongCandidate one = wrong_candidate(task, kStarter, WrongKind::kPerturbOne, 0);
  EXPECT_THAT(one.source, HasSubstr("#define KILN_CHECK_FACTOR 20.0\n"));
  EXPECT_THAT(one.source, HasSubstr("#define KILN_CHECK_FRACTION 0.0\n"));
  const WrongCandidate many = wrong_candidate(task, kStarter, WrongKind::kPerturbFraction, 0);
  EXPECT_THAT(many.source, HasSubstr("#define KILN_CHECK_FACTOR 4.0\n"));
  EXPECT_THAT(many.source, HasSubstr("#define KILN_CHECK_FRACTION 0.001\n"));
  EXPECT_THAT(many.source, HasSubstr("#define KILN_CHECK_MODE 0\n"));
}

// Rows outside the contract reach the wrapper as the ABI position of the index tensor and the
// value that marks them, only for the output the rule names.
TEST(WrongCandidate, CarriesTheIgnoredRowsOfItsOutput) {
  tasks::Task task = two_output_task();
  task.tensors.insert(task.tensors.begin() + 1, {"idx", "i32", {"N"}, false, {}});
  task.ignore_rows_where = {{"b", "idx", -1}};
  const std::string b = wrong_candidate(task, kStarter, WrongKind::kDropTail, 1).source;
  EXPECT_THAT(b, HasSubstr("#define KILN_CHECK_IGNORE_COUNT 1\n"));
  EXPECT_THAT(b, HasSubstr("#define KILN_CHECK_IGNORE_INDEX 1\n"));
  EXPECT_THAT(b, HasSubstr("#define KILN_CHECK_IGNORE_EQUALS -1LL\n"));
  const std::string a = wrong_candidate(task, kStarter, WrongKind::kDropTail, 0).source;
  EXPECT_THAT(a, HasSubstr("#define KILN_CHECK_IGNORE_COUNT 0\n"));
}

TEST(WrongCandidate, IncludesTheStarterWithItsLaunchRenamedAndExportsItsOwn) {
  const std::string source =
      wrong_candidate(two_output_task(), kStarter, WrongKind::kDropTail, 1).source;
  const size_t rename = source.find("#define kiln_launch kiln_check_starter_launch");
  const size_t starter = source.find(kStarter);
  const size_t undef = source.find("#undef kiln_launch");
  const size_t exported = source.find("extern \"C\" int kiln_launch(", undef);
  ASSERT_NE(rename, std::string::npos);
  ASSERT_NE(starter, std::string::npos);
  ASSERT_NE(undef, std::string::npos);
  ASSERT_NE(exported, std::string::npos);
  EXPECT_LT(rename, starter);
  EXPECT_LT(starter, undef);
}

TEST(WrongCandidate, NamesTheTargetOutputByItsPositionAfterTheInputs) {
  const std::string source =
      wrong_candidate(two_output_task(), kStarter, WrongKind::kPerturbOne, 1).source;
  EXPECT_THAT(source, HasSubstr("#define KILN_CHECK_FIRST_OUTPUT 1\n"));
  EXPECT_THAT(source, HasSubstr("#define KILN_CHECK_OUTPUT 1\n"));
  EXPECT_THAT(source, HasSubstr("#define KILN_CHECK_MODE 0\n"));
}

TEST(WrongCandidate, CarriesTheTasksToleranceIntoThePerturbation) {
  const std::string source =
      wrong_candidate(two_output_task(), kStarter, WrongKind::kPerturbOne, 0).source;
  EXPECT_THAT(source, HasSubstr("#define KILN_CHECK_ATOL 0.25\n"));
  EXPECT_THAT(source, HasSubstr("#define KILN_CHECK_RTOL 0.5\n"));
  EXPECT_THAT(source, HasSubstr("#define KILN_CHECK_FACTOR 4.0\n"));
}

TEST(WrongCandidate, UnwrittenReturnsWithoutCallingTheStarter) {
  const WrongCandidate c = wrong_candidate(two_output_task(), kStarter, WrongKind::kUnwritten, 0);
  EXPECT_EQ(c.kind, WrongKind::kUnwritten);
  EXPECT_THAT(c.source, HasSubstr("#define KILN_CHECK_MODE 2\n"));
  EXPECT_THAT(c.what, HasSubstr("writes no output"));
}

TEST(BrokenCandidate, TheLineItReportsHoldsTheCallThatCannotCompile) {
  int line = 0;
  const std::string source = broken_candidate(kStarter, &line);
  ASSERT_GT(line, 0);
  size_t at = 0;
  for (int i = 1; i < line; ++i) at = source.find('\n', at) + 1;
  const std::string text = source.substr(at, source.find('\n', at) - at);
  EXPECT_THAT(text, HasSubstr("kiln_check_function_that_does_not_exist()"));
  EXPECT_EQ(source.rfind(kStarter, 0), 0u);
}

TEST(WrongCandidate, KindNamesAreStable) {
  EXPECT_EQ(kind_name(WrongKind::kPerturbOne), "perturb_one");
  EXPECT_EQ(kind_name(WrongKind::kPerturbFraction), "perturb_fraction");
  EXPECT_EQ(kind_name(WrongKind::kDropTail), "drop_tail");
  EXPECT_EQ(kind_name(WrongKind::kUnwritten), "unwritten");
}

}  // namespace
}  // namespace kiln::taskcheck
