// The zoo on a real GPU: one test per kb/zoo entry, ZooGpu/zoo_gpu.Correct/<ID>, every test
// shape checked and the last one timed (entry_timing.h); measurement lines are appended to
// $KILN_ZOO_RESULTS when set (record them with kiln_zoo_record).
//
// Environment: KILN_ZOO_DIR, KILN_ZOO_LIB_DIR (see zoo_paths.h); KILN_ZOO_RESULTS;
// KILN_ZOO_SEED (default 0); KILN_ZOO_SAMPLES (default 30, at least 20 recommended);
// KILN_ZOO_NO_TIMING=1 (correctness only); KILN_ZOO_TIMEOUT_S (per entry, default 480).
#include <gtest/gtest.h>

#include "entry_test.h"
#include "entry_timing.h"
#include "zoo_paths.h"

namespace kiln::zoo {
namespace {

class zoo_gpu : public ::testing::TestWithParam<std::string> {};

TEST_P(zoo_gpu, Correct) {
  EntryTest test;
  test.library_prefix = "zoo_";
  try {
    test.options.seed = std::stoull(env_or("KILN_ZOO_SEED", "0"));
    test.options.samples = std::stoi(env_or("KILN_ZOO_SAMPLES", "30"));
    test.timeout_s = std::stod(env_or("KILN_ZOO_TIMEOUT_S", "480"));
  } catch (const std::exception&) {
    FAIL() << "KILN_ZOO_SEED, KILN_ZOO_SAMPLES and KILN_ZOO_TIMEOUT_S must be numbers";
  }
  test.options.time = env_or("KILN_ZOO_NO_TIMING", "0") == "0";
  test.results_path = env_or("KILN_ZOO_RESULTS", "");
  test.make_run = [](const ZooMeta& meta, const RunOptions& options, Report& report) {
    return std::make_unique<TimedEntryRun>(meta, options, report);
  };
  run_entry_test(GetParam(), test);
}

INSTANTIATE_TEST_SUITE_P(ZooGpu, zoo_gpu, ::testing::ValuesIn(zoo_kernel_ids()), entry_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(zoo_gpu);

TEST(ZooGpuSetup, FindsTheZooAndItsBuiltKernels) {
  const auto zoo_dir = zoo_source_dir();
  ASSERT_FALSE(zoo_dir.empty()) << "kb/zoo not found; set KILN_ZOO_DIR";
  EXPECT_FALSE(zoo_kernel_ids().empty()) << "no kb/zoo/*/kernel.cu under " << zoo_dir;
  EXPECT_FALSE(zoo_library_dir().empty()) << "BUILD/zoo/ not found; set KILN_ZOO_LIB_DIR";
}

}  // namespace
}  // namespace kiln::zoo
