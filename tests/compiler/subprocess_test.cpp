// subprocess.h: output capture, exit codes, signals, time limits.
#include "kiln/compiler/subprocess.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

namespace kiln::compiler {
namespace {

TEST(Subprocess, CapturesOutputAndExitCode) {
  const ProcessResult r = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.output.find("out"), std::string::npos);
  EXPECT_NE(r.output.find("err"), std::string::npos);
  EXPECT_EQ(r.describe(), "exit code 3");
}

TEST(Subprocess, StartsInTheWorkingDirectoryWhenGiven) {
  ProcessOptions options;
  options.working_dir = "/tmp";
  const ProcessResult r = run_process({"/bin/sh", "-c", "pwd"}, options);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.output, "/tmp\n");
  options.working_dir = "/nonexistent/dir";
  EXPECT_FALSE(run_process({"/bin/sh", "-c", "pwd"}, options).ok());
}

TEST(Subprocess, KillsWhatRunsTooLong) {
  ProcessOptions options;
  options.timeout_seconds = 0.5;
  const ProcessResult r = run_process({"/bin/sh", "-c", "sleep 30"}, options);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.seconds, 5);
  EXPECT_NE(r.describe().find("timed out"), std::string::npos);
}

TEST(Subprocess, ReportsSignals) {
  const ProcessResult r = run_process({"/bin/sh", "-c", "kill -SEGV $$"});
  EXPECT_EQ(r.signal, 11);
}

TEST(Subprocess, MissingProgramIsAnError) {
  const ProcessResult r = run_process({"/nonexistent/program"});
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.exit_code, 127);
}

TEST(Subprocess, PassesEnvironmentAndSplitsStdout) {
  ProcessOptions options;
  options.extra_env["KILN_TEST_VALUE"] = "42";
  options.stdout_file =
      (std::filesystem::temp_directory_path() / "kiln-subprocess-test.txt").string();
  const ProcessResult r =
      run_process({"/bin/sh", "-c", "echo $KILN_TEST_VALUE; echo side >&2"}, options);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.output, "side\n");
  std::FILE* f = std::fopen(options.stdout_file.c_str(), "r");
  ASSERT_NE(f, nullptr);
  char buffer[16] = {};
  EXPECT_NE(std::fgets(buffer, sizeof buffer, f), nullptr);
  std::fclose(f);
  EXPECT_STREQ(buffer, "42\n");
  EXPECT_TRUE(run_process({}).error.size() > 0);
}

}  // namespace
}  // namespace kiln::compiler
