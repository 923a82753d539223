#include <gtest/gtest.h>

#include "bundle_fixture.h"
#include "kiln/base/sha256.h"
#include "kiln/tasks/task.h"

namespace kiln::tasks {
namespace {

using testing::BundleCopy;

std::string hash_of(const std::filesystem::path& dir) {
  auto task = load_task(dir);
  EXPECT_TRUE(task) << task.error().message;
  return task ? task->sha256 : "";
}

TEST(BundleHash, IsStableAcrossLoads) {
  const auto dir = testing::bundled_tasks_dir() / "fp16_gemm";
  EXPECT_EQ(hash_of(dir), hash_of(dir));
}

TEST(BundleHash, DoesNotDependOnWhereTheBundleLies) {
  BundleCopy first;
  BundleCopy second;
  EXPECT_EQ(hash_of(first.dir()), hash_of(second.dir()));
  EXPECT_EQ(hash_of(first.dir()), hash_of(testing::bundled_tasks_dir() / "fp16_gemm"));
}

TEST(BundleHash, FollowsTheDocumentedFormat) {
  // tasks/FORMAT.md: each file enters as "NAME\nLENGTH\n" then its bytes, in the
  // order task.json, reference, baseline, starter, readme, then the GPU reference.
  const auto dir = testing::bundled_tasks_dir() / "fp16_gemm";
  Sha256 expected;
  for (const char* name : {"task.json", "reference.cpp", "baseline.cu", "starter.cu", "README.md",
                           "gpu_reference.cu"}) {
    const std::string contents = testing::read_text(dir / name);
    expected.update(std::string(name) + "\n" + std::to_string(contents.size()) + "\n");
    expected.update(contents);
  }
  EXPECT_EQ(hash_of(dir), expected.hex_digest());
}

TEST(BundleHash, ChangesWhenAnyBundleFileChanges) {
  BundleCopy bundle;
  const std::string original = hash_of(bundle.dir());
  // Trailing whitespace keeps task.json valid JSON and every source file compilable.
  for (const char* name : {"task.json", "reference.cpp", "baseline.cu", "starter.cu", "README.md",
                           "gpu_reference.cu"}) {
    const auto path = bundle.dir() / name;
    const std::string contents = testing::read_text(path);
    testing::write_text(path, contents + " ");
    EXPECT_NE(hash_of(bundle.dir()), original) << "after changing " << name;
    testing::write_text(path, contents);
    EXPECT_EQ(hash_of(bundle.dir()), original) << "after restoring " << name;
  }
}

TEST(BundleHash, IgnoresFilesOutsideTheBundleList) {
  BundleCopy bundle;
  const std::string original = hash_of(bundle.dir());
  testing::write_text(bundle.dir() / "notes.txt", "scratch");
  EXPECT_EQ(hash_of(bundle.dir()), original);
}

}  // namespace
}  // namespace kiln::tasks
