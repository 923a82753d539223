// The body shared by the zoo's per-entry tests (zoo_gpu_test.cpp on a GPU, zoo_sim_test.cpp
// on the CPU simulator): check meta.json, run the entry in a forked child (so a kernel that
// faults or hangs fails only its own test), and turn the child's report into gtest failures,
// skips and measurement lines.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "entry_run.h"
#include "kiln/base/env.h"  // env_or, for the KILN_ZOO_* knobs

namespace kiln::zoo {

struct EntryTest {
  std::string library_prefix;  // the built kernel is <library dir>/<prefix><ID>.so
  RunOptions options;
  double timeout_s = 480;    // per entry
  std::string results_path;  // where measurement lines are appended; empty: not kept
  std::function<std::unique_ptr<EntryRun>(const ZooMeta&, const RunOptions&, Report&)> make_run;
};

// Ids of the kb/zoo entries that have a kernel.cu.
std::vector<std::string> zoo_kernel_ids();
// The gtest name of an entry id (non-alphanumerics become '_').
std::string entry_test_name(const ::testing::TestParamInfo<std::string>& info);

// Runs one entry as the current test (gtest failures and skips).
void run_entry_test(const std::string& id, const EntryTest& test);

}  // namespace kiln::zoo
