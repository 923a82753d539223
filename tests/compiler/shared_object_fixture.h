// Shared objects for the build-step tests: small C++ sources compiled with g++, and where
// the source tree's tasks and cheats are.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "kiln/compiler/subprocess.h"
#include "support/temp_dir.h"

namespace kiln::compiler::testing {

using kiln::testing::read_text;
using kiln::testing::TempDir;
using kiln::testing::write_text;

inline std::filesystem::path source_dir() { return KILN_TEST_SOURCE_DIR; }

// Compiles C++ `source` into DIR/NAME.so with g++; an empty path (and a test failure) on error.
inline std::filesystem::path build_shared_object(const std::filesystem::path& dir,
                                                 const std::string& name, const std::string& source,
                                                 const std::vector<std::string>& flags = {}) {
  const auto cpp = dir / (name + ".cpp");
  const auto so = dir / (name + ".so");
  write_text(cpp, source);
  std::vector<std::string> argv = {"g++", "-std=c++20", "-O1", "-fPIC", "-shared"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-o", so.string(), cpp.string()});
  const ProcessResult result = run_process(argv);
  EXPECT_TRUE(result.ok()) << result.describe() << "\n" << result.output;
  return result.ok() ? so : std::filesystem::path();
}

}  // namespace kiln::compiler::testing
