// `kiln task new` as a library: the example loads as it is and says TODO, --like copies a
// bundle under the new name, --from makes a kernel the starter, and nothing is overwritten.
#include "kiln/taskcheck/scaffold.h"

#include <gmock/gmock.h>

#include "kiln/tasks/task.h"
#include "support/temp_dir.h"

namespace kiln::taskcheck {
namespace {

namespace fs = std::filesystem;
using kiln::testing::read_text;
using kiln::testing::TempDir;
using kiln::testing::write_text;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(Scaffold, TheExampleLoadsAsItIsAndItsTitleSaysTodo) {
  TempDir dir;
  auto made = scaffold_task({"my_scale", dir.path(), {}, {}});
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(*made, dir / "my_scale");
  auto task = tasks::load_task(*made);
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_EQ(task->name, "my_scale");
  EXPECT_THAT(task->title, HasSubstr("TODO"));
  EXPECT_FALSE(task->sim_workloads.empty());
  EXPECT_THAT(read_text(*made / "README.md"), HasSubstr("## task.json, field by field"));
  for (const char* file : {"reference.cpp", "baseline.cu", "starter.cu"})
    EXPECT_THAT(read_text(*made / file), HasSubstr("my_scale")) << file;
}

TEST(Scaffold, TheExampleStillLoadsOnceItsTodosAreFilledIn) {
  TempDir dir;
  auto made = scaffold_task({"filled", dir.path(), {}, {}});
  ASSERT_TRUE(made);
  std::string json = read_text(*made / "task.json");
  for (size_t at = json.find("TODO"); at != std::string::npos; at = json.find("TODO"))
    json.replace(at, 4, "Scale");
  write_text(*made / "task.json", json);
  auto task = tasks::load_task(*made);
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_THAT(task->title, Not(HasSubstr("TODO")));
}

TEST(Scaffold, LikeCopiesEveryFileOfTheBundleUnderTheNewName) {
  TempDir dir;
  auto made = scaffold_task({"my_gemm", dir.path(), fs::path(KILN_TASKS_DIR) / "fp16_gemm", {}});
  ASSERT_TRUE(made) << made.error().message;
  auto copy = tasks::load_task(*made);
  auto original = tasks::load_task(fs::path(KILN_TASKS_DIR) / "fp16_gemm");
  ASSERT_TRUE(copy) << copy.error().message;
  ASSERT_TRUE(original);
  EXPECT_EQ(copy->name, "my_gemm");
  EXPECT_THAT(copy->title, HasSubstr("TODO (copied from fp16_gemm)"));
  EXPECT_EQ(copy->workloads.size(), original->workloads.size());
  EXPECT_EQ(copy->tolerance.atol, original->tolerance.atol);
  EXPECT_FALSE(copy->gpu_reference_path.empty());
  EXPECT_EQ(read_text(copy->starter_path), read_text(original->starter_path));
  EXPECT_THAT(read_text(copy->readme_path), HasSubstr("TODO: this README was copied"));
}

TEST(Scaffold, FromMakesTheGivenKernelTheStarter) {
  TempDir dir;
  const std::string kernel = "#include \"kiln/abi.h\"\n// mine\nextern \"C\" int kiln_launch();\n";
  write_text(dir / "mine.cu", kernel);
  auto made =
      scaffold_task({"mine", dir.path(), fs::path(KILN_TASKS_DIR) / "rmsnorm", dir / "mine.cu"});
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(read_text(*made / "starter.cu"), kernel);
  auto plain = scaffold_task({"mine2", dir.path(), {}, dir / "mine.cu"});
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(read_text(*plain / "starter.cu"), kernel);
}

TEST(Scaffold, FromRefusesAFileThatDefinesNoKilnLaunch) {
  TempDir dir;
  write_text(dir / "other.cu", "__global__ void k() {}\n");
  auto made = scaffold_task({"other", dir.path(), {}, dir / "other.cu"});
  ASSERT_FALSE(made);
  EXPECT_THAT(made.error().message, HasSubstr("defines no kiln_launch"));
  EXPECT_FALSE(fs::exists(dir / "other"));
}

TEST(Scaffold, RefusesAnExistingFolderAndABadName) {
  TempDir dir;
  fs::create_directories(dir / "taken");
  auto taken = scaffold_task({"taken", dir.path(), {}, {}});
  ASSERT_FALSE(taken);
  EXPECT_THAT(taken.error().message, HasSubstr("already exists"));
  auto bad = scaffold_task({"Bad-Name", dir.path(), {}, {}});
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message, HasSubstr("[a-z0-9_]+"));
}

TEST(Scaffold, LikeABundleThatDoesNotLoadSaysWhy) {
  TempDir dir;
  fs::create_directories(dir / "broken");
  write_text(dir / "broken" / "task.json", "{}");
  auto made = scaffold_task({"copy", dir.path(), dir / "broken", {}});
  ASSERT_FALSE(made);
  EXPECT_THAT(made.error().message, HasSubstr("--like"));
}

}  // namespace
}  // namespace kiln::taskcheck
