// The zoo on a real GPU: one test per kb/zoo entry, ZooGpu/zoo_gpu.Correct/<ID>. Each runs
// the entry in a forked child (entry_run.h), so a kernel that faults or hangs fails only
// its own test, and turns the child's report into test failures, skips and measurement
// lines (appended to $KILN_ZOO_RESULTS when set; record them with kiln_zoo_record).
//
// Environment: KILN_ZOO_DIR, KILN_ZOO_LIB_DIR (see zoo_paths.h); KILN_ZOO_RESULTS;
// KILN_ZOO_SEED (default 0); KILN_ZOO_SAMPLES (default 30, at least 20 recommended);
// KILN_ZOO_NO_TIMING=1 (correctness only); KILN_ZOO_TIMEOUT_S (per entry, default 480).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "child_process.h"
#include "entry_run.h"
#include "report.h"
#include "zoo_meta.h"
#include "zoo_paths.h"

namespace kiln::zoo {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// Entries with a kernel.cu: the ones with something to run.
std::vector<std::string> gpu_entry_ids() {
  std::vector<std::string> ids;
  const auto dir = zoo_source_dir();
  if (dir.empty()) return ids;
  for (const auto& entry : find_zoo_entries(dir)) {
    if (std::filesystem::exists(entry / "kernel.cu")) ids.push_back(entry.filename().string());
  }
  return ids;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

void append_result_line(const std::string& path, const nlohmann::ordered_json& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0) << "cannot open KILN_ZOO_RESULTS=" << path << " for appending";
  const std::string text = line.dump() + "\n";
  const ssize_t written = ::write(fd, text.data(), text.size());  // one write: lines stay whole
  ::close(fd);
  EXPECT_EQ(written, static_cast<ssize_t>(text.size())) << "short write to " << path;
}

RunOptions options_from_env() {
  RunOptions options;
  options.seed = std::stoull(env_or("KILN_ZOO_SEED", "0"));
  options.samples = std::stoi(env_or("KILN_ZOO_SAMPLES", "30"));
  options.time = env_or("KILN_ZOO_NO_TIMING", "0") == "0";
  return options;
}

class zoo_gpu : public ::testing::TestWithParam<std::string> {};

TEST_P(zoo_gpu, Correct) {
  const std::string id = GetParam();
  const auto zoo_dir = zoo_source_dir();
  ASSERT_FALSE(zoo_dir.empty()) << "kb/zoo not found; set KILN_ZOO_DIR";
  std::vector<std::string> setup_problems;
  const auto techniques = load_techniques(zoo_dir, setup_problems);
  ASSERT_TRUE(setup_problems.empty()) << setup_problems.front();
  std::set<std::string> ids;
  for (const auto& entry : find_zoo_entries(zoo_dir)) ids.insert(entry.filename().string());
  const MetaCheck check = check_zoo_entry(zoo_dir / id, techniques, ids);
  if (!check.problems.empty()) {
    std::string all;
    for (const auto& problem : check.problems) all += "\n  kb/zoo/" + id + "/" + problem;
    FAIL() << "the entry is not valid, so it is not run:" << all;
  }
  const ZooMeta& meta = *check.meta;
  const auto library_dir = zoo_library_dir();
  ASSERT_FALSE(library_dir.empty())
      << "the built kernels (BUILD/zoo/) were not found; set KILN_ZOO_LIB_DIR";
  const auto library = library_dir / ("zoo_" + id + ".so");
  ASSERT_TRUE(std::filesystem::exists(library))
      << library << " is missing: build it with cmake --build BUILD --target zoo_kernels "
      << "(it is skipped at configure time when meta.json lacks a valid arch)";

  const auto report_path = std::filesystem::temp_directory_path() /
                           ("kiln_zoo_gpu_" + id + "_" + std::to_string(::getpid()) + ".jsonl");
  std::filesystem::remove(report_path);
  RunOptions options;
  double timeout = 480;
  try {
    options = options_from_env();
    timeout = std::stod(env_or("KILN_ZOO_TIMEOUT_S", "480"));
  } catch (const std::exception&) {
    FAIL() << "KILN_ZOO_SEED, KILN_ZOO_SAMPLES and KILN_ZOO_TIMEOUT_S must be numbers";
  }
  const ChildOutcome outcome = run_in_child(
      [&] {
        Report report(report_path, id);
        run_zoo_entry(meta, library, options, report);
        report.done();
        return report.failures() > 0 ? 1 : 0;
      },
      timeout);
  const ReportContents contents = read_report(report_path);
  std::filesystem::remove(report_path);

  for (const auto& failure : contents.failures) ADD_FAILURE() << "kb/zoo/" << id << ": " << failure;
  const std::string results = env_or("KILN_ZOO_RESULTS", "");
  for (const auto& line : contents.measurements) {
    std::cout << "[zoo_gpu " << id << "] measurement: " << line.dump() << "\n";
    if (!results.empty()) append_result_line(results, line);
  }
  if (!outcome.exited || !contents.done || !contents.read_error.empty()) {
    std::string last;
    const size_t from = contents.logs.size() > 5 ? contents.logs.size() - 5 : 0;
    for (size_t i = from; i < contents.logs.size(); ++i) last += "\n  " + contents.logs[i];
    ADD_FAILURE() << "kb/zoo/" << id << ": the child process running the entry ended abnormally: "
                  << outcome.describe()
                  << (contents.read_error.empty() ? "" : "; " + contents.read_error)
                  << (last.empty() ? std::string("; it reported nothing")
                                   : "; its last steps:" + last);
  } else if (outcome.exit_code != 0 && contents.failures.empty()) {
    ADD_FAILURE() << "kb/zoo/" << id << ": the child exited with " << outcome.exit_code
                  << " without reporting a failure";
  }
  if (!contents.skips.empty() && contents.failures.empty()) GTEST_SKIP() << contents.skips.front();
}

INSTANTIATE_TEST_SUITE_P(ZooGpu, zoo_gpu, ::testing::ValuesIn(gpu_entry_ids()), test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(zoo_gpu);

TEST(ZooGpuSetup, FindsTheZooAndItsBuiltKernels) {
  const auto zoo_dir = zoo_source_dir();
  ASSERT_FALSE(zoo_dir.empty()) << "kb/zoo not found; set KILN_ZOO_DIR";
  EXPECT_FALSE(gpu_entry_ids().empty()) << "no kb/zoo/*/kernel.cu under " << zoo_dir;
  EXPECT_FALSE(zoo_library_dir().empty()) << "BUILD/zoo/ not found; set KILN_ZOO_LIB_DIR";
}

}  // namespace
}  // namespace kiln::zoo
