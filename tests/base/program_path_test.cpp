// program_beside_self: the sibling of this test executable.
#include "kiln/base/program_path.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(ProgramPath, NamesAProgramInTheFolderOfThisExecutable) {
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  EXPECT_EQ(program_beside_self("kiln-worker"), self.parent_path() / "kiln-worker");
  EXPECT_TRUE(std::filesystem::exists(program_beside_self(self.filename().string())));
}

}  // namespace
}  // namespace kiln
