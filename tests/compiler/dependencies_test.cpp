// dependencies.h: the headers a compile read, to keep cached compiles honest.
#include "kiln/compiler/dependencies.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace kiln::compiler {
namespace {

TEST(Dependencies, KeepsOwnHeadersAndDropsToolkitSystemAndNamedFiles) {
  testing::TempDir dir;
  testing::write_text(dir / "kernel.cu", "x");
  testing::write_text(dir / "helper.cuh", "y");
  testing::write_text(dir / "abi" / "kiln" / "abi.h", "z");
  const std::string rule =
      "keep/kernel.o : kernel.cu \\\n    /usr/include/stdc-predef.h \\\n"
      "    /opt/cuda/include/cuda_runtime.h helper.cuh \\\n    " +
      (dir / "abi" / "kiln" / "abi.h").string() + "\n";
  auto paths = parse_dependency_file(rule, dir.path(), {"/usr/include", "/opt/cuda"},
                                     {dir / "kernel.cu", dir / "abi" / "kiln" / "abi.h"});
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(std::filesystem::path(paths[0]).filename(), "helper.cuh");
}

TEST(Dependencies, NoticesAChangedOrMissingHeader) {
  testing::TempDir dir;
  testing::write_text(dir / "helper.cuh", "#define TILE 64\n");
  auto deps = hash_dependencies({(dir / "helper.cuh").string()});
  ASSERT_EQ(deps.size(), 1u);
  EXPECT_TRUE(dependencies_unchanged(deps));
  testing::write_text(dir / "helper.cuh", "#define TILE 128\n");
  EXPECT_FALSE(dependencies_unchanged(deps));
  std::filesystem::remove(dir / "helper.cuh");
  EXPECT_FALSE(dependencies_unchanged(deps));
}

TEST(Dependencies, RoundTripThroughJson) {
  std::vector<Dependency> deps = {{"/a/b.h", "00ff"}};
  auto back = dependencies_from_json(dependencies_to_json(deps));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].path, "/a/b.h");
  EXPECT_EQ(back[0].sha256, "00ff");
  EXPECT_TRUE(dependencies_from_json(nlohmann::json("junk")).empty());
}

TEST(Dependencies, EmptyOrMalformedRuleGivesNothing) {
  EXPECT_TRUE(parse_dependency_file("", "/", {}, {}).empty());
  EXPECT_TRUE(parse_dependency_file("no colon here", "/", {}, {}).empty());
}

}  // namespace
}  // namespace kiln::compiler
