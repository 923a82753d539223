// The run manifest: its round trip, the budget's checks, and the freeze that names the files
// of a task bundle that changed since `kiln setup`.
#include "kiln/frontier/run_manifest.h"

#include <gmock/gmock.h>

#include "frontier_fixture.h"

namespace kiln::frontier::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

RunManifest manifest_for(const tasks::Task& task) {
  RunManifest m;
  m.run_id = "fp16_gemm-1";
  m.created = "2026-12-01T00:00:00.000Z";
  m.task_name = task.name;
  m.task_sha256 = task.sha256;
  m.task_dir = task.dir;
  m.task_files = task_file_hashes(task).value();
  m.kiln_version = "0.1.0";
  m.runners = {{"http://127.0.0.1:8000", {"NVIDIA H200"}, "580.1", "13.0"}};
  m.budget.promotion_margin = 0.02;
  m.tools = {"get_task", "benchmark"};
  return m;
}

// A copy of the bundled task, to change.
std::filesystem::path copy_bundle(const std::filesystem::path& to) {
  std::filesystem::copy(bundled_task()->dir, to, std::filesystem::copy_options::recursive);
  return to;
}

TEST(RunManifest, RoundTripsThroughTheFile) {
  TempDir run;
  const RunManifest m = manifest_for(*bundled_task());
  ASSERT_TRUE(write_manifest(run.path(), m).ok());
  auto read = read_manifest(run.path());
  ASSERT_TRUE(read.ok()) << read.error().message;
  EXPECT_EQ(read->task_sha256, m.task_sha256);
  EXPECT_EQ(read->task_files, m.task_files);
  EXPECT_GE(read->task_files.size(), 5u);  // task.json and the files it names
  EXPECT_TRUE(read->task_files.count("task.json"));
  EXPECT_TRUE(read->task_files.count("reference.cpp"));
  ASSERT_EQ(read->runners.size(), 1u);
  EXPECT_EQ(read->runners[0].gpus, std::vector<std::string>{"NVIDIA H200"});
  EXPECT_DOUBLE_EQ(read->budget.promotion_margin, 0.02);
  EXPECT_DOUBLE_EQ(read->budget.max_cv, Budget{}.max_cv);
  EXPECT_EQ(read->tools, m.tools);
}

TEST(RunManifest, AMissingManifestSaysHowToMakeOne) {
  TempDir run;
  auto read = read_manifest(run.path());
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.error().message, HasSubstr("kiln setup --task"));
}

TEST(Budget, DefaultsAndRefusals) {
  auto defaults = budget_from_json(nlohmann::json::object());
  ASSERT_TRUE(defaults.ok());
  EXPECT_DOUBLE_EQ(defaults->promotion_margin, 0.01);
  auto unknown = budget_from_json({{"margin", 0.1}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("unknown field `margin`"));
  auto too_big = budget_from_json({{"max_cv", 5}});
  ASSERT_FALSE(too_big.ok());
  EXPECT_THAT(too_big.error().message, HasSubstr("[0, 1)"));
}

TEST(Freeze, AnUnchangedBundleIsAccepted) {
  TempDir dir;
  auto task = tasks::load_task(copy_bundle(dir / "fp16_gemm"));
  ASSERT_TRUE(task.ok());
  EXPECT_TRUE(check_frozen(manifest_for(*task), *task).ok());
}

TEST(Freeze, AChangedBundleIsRefusedNamingTheFilesThatChanged) {
  TempDir dir;
  const auto bundle = copy_bundle(dir / "fp16_gemm");
  auto before = tasks::load_task(bundle);
  ASSERT_TRUE(before.ok());
  const RunManifest m = manifest_for(*before);
  write_text(bundle / "reference.cpp", read_text(bundle / "reference.cpp") + "\n// loosened\n");
  auto after = tasks::load_task(bundle);
  ASSERT_TRUE(after.ok());
  auto status = check_frozen(m, *after);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(status.error().message, HasSubstr("reference.cpp (changed)"));
  EXPECT_THAT(status.error().message, Not(HasSubstr("task.json")));
  EXPECT_THAT(status.error().message, HasSubstr("kiln setup --task fp16_gemm"));
}

}  // namespace
}  // namespace kiln::frontier::testing
