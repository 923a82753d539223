#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bundle_fixture.h"
#include "kiln/tasks/task.h"

namespace kiln::tasks {
namespace {

using ::testing::HasSubstr;

TEST(Catalog, LoadsEveryBundledTaskWithoutErrors) {
  const auto catalog = load_catalog(testing::bundled_tasks_dir());
  for (const auto& [path, error] : catalog.broken) ADD_FAILURE() << path << ": " << error.message;
  ASSERT_FALSE(catalog.tasks.empty());
  bool found = false;
  for (const auto& task : catalog.tasks) found = found || task.name == "fp16_gemm";
  EXPECT_TRUE(found);
}

TEST(Catalog, SortsTasksByNameAndReportsBrokenBundles) {
  testing::TempDir root;
  for (const char* name : {"zeta_gemm", "alpha_gemm", "mid_gemm"}) {
    std::filesystem::copy(testing::bundled_tasks_dir() / "fp16_gemm", root.path() / name,
                          std::filesystem::copy_options::recursive);
    auto json = nlohmann::json::parse(testing::read_text(root.path() / name / "task.json"));
    json["name"] = name;
    testing::write_text(root.path() / name / "task.json", json.dump());
  }
  testing::write_text(root.path() / "mid_gemm" / "task.json", "{ not json");
  std::filesystem::create_directories(root.path() / "no_task_here");
  testing::write_text(root.path() / "stray.json", "{}");

  const auto catalog = load_catalog(root.path());
  ASSERT_EQ(catalog.tasks.size(), 2u);
  EXPECT_EQ(catalog.tasks[0].name, "alpha_gemm");
  EXPECT_EQ(catalog.tasks[1].name, "zeta_gemm");
  ASSERT_EQ(catalog.broken.size(), 1u);
  EXPECT_EQ(catalog.broken[0].first, root.path() / "mid_gemm");
  EXPECT_THAT(catalog.broken[0].second.message, HasSubstr("mid_gemm/task.json: is not valid JSON"));
}

TEST(Catalog, ReportsMissingRootAsBroken) {
  testing::TempDir root;
  const auto missing = root.path() / "absent";
  const auto catalog = load_catalog(missing);
  EXPECT_TRUE(catalog.tasks.empty());
  ASSERT_EQ(catalog.broken.size(), 1u);
  EXPECT_THAT(catalog.broken[0].second.message,
              HasSubstr("cannot list tasks in " + missing.string()));
}

}  // namespace
}  // namespace kiln::tasks
