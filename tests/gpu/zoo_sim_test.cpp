// The zoo on kiln's CPU simulator: one test per kb/zoo entry, ZooSim/zoo_sim.Correct/<ID>.
// The entry's unmodified kernel.cu, built with `nvcc -cudart none` into BUILD/zoo/zoo_sim_<ID>.so
// (PTX only), runs through libkiln_cudart_sim — the engine behind the `simulate` tool — on the
// first (small) test shape of its meta.json, with the same checks as on the GPU: the CPU
// reference of its op, two launches with differently poisoned outputs, guard bands, inputs
// unchanged. Nothing is timed: the simulator counts instructions, not time.
//
// Environment: KILN_ZOO_DIR, KILN_ZOO_LIB_DIR (see zoo_paths.h); KILN_ZOO_SEED (default 0);
// KILN_ZOO_TIMEOUT_S (per entry, default 600).
#include <gtest/gtest.h>

#include "entry_test.h"
#include "zoo_paths.h"

namespace kiln::zoo {
namespace {

class zoo_sim : public ::testing::TestWithParam<std::string> {};

TEST_P(zoo_sim, Correct) {
  EntryTest test;
  test.library_prefix = "zoo_sim_";
  try {
    test.options.seed = std::stoull(env_or("KILN_ZOO_SEED", "0"));
    test.timeout_s = std::stod(env_or("KILN_ZOO_TIMEOUT_S", "600"));
  } catch (const std::exception&) {
    FAIL() << "KILN_ZOO_SEED and KILN_ZOO_TIMEOUT_S must be numbers";
  }
  test.options.time = false;
  test.options.max_shapes = 1;
  test.make_run = [](const ZooMeta& meta, const RunOptions& options, Report& report) {
    return std::make_unique<EntryRun>(meta, options, report);
  };
  run_entry_test(GetParam(), test);
}

INSTANTIATE_TEST_SUITE_P(ZooSim, zoo_sim, ::testing::ValuesIn(zoo_kernel_ids()), entry_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(zoo_sim);

}  // namespace
}  // namespace kiln::zoo
