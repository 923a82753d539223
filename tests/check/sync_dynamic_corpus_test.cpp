// The tests/corpus/sync_dynamic pairs (manifest.json): every kernel runs on the simulator under
// the synchronization checker with the default schedules; a bug must yield each expected kind
// (it may stop with a fault, e.g. a deadlock), its fix must run cleanly and report nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/file.h"
#include "kiln/check/dynamic_racecheck.h"
#include "kiln/check/dynamic_synccheck.h"
#include "kiln/sim/device.h"

namespace kiln::check {
namespace {

struct SyncCase {
  std::string file, kernel;
  sim::Dim3 grid, block;
  std::vector<uint32_t> buffers;
  std::vector<int32_t> ints;
  std::vector<std::string> expect;  // finding kinds
  // The schedules it needs: the default three, or (manifest "explore") in order, reversed and
  // `schedules - 2` of that kind.
  sim::WarpOrder explore = sim::WarpOrder::Random;
  uint32_t schedules = 3;
};

std::vector<sim::WarpSchedule> plan(const SyncCase& c) {
  return race_schedules(c.schedules, 1, c.explore);
}

void PrintTo(const SyncCase& c, std::ostream* os) { *os << c.kernel; }

sim::Dim3 dim(const nlohmann::json& j) {
  return {j.at(0).get<uint32_t>(), j.at(1).get<uint32_t>(), j.at(2).get<uint32_t>()};
}

std::vector<SyncCase> corpus() {
  std::vector<SyncCase> cases;
  std::ifstream in(std::string(KILN_SYNC_DYNAMIC_SOURCE_DIR) + "/manifest.json");
  if (!in) return cases;
  nlohmann::json manifest = nlohmann::json::parse(in);
  for (const nlohmann::json& j : manifest.at("cases")) {
    SyncCase c;
    c.file = j.at("file").get<std::string>();
    c.kernel = j.at("kernel").get<std::string>();
    c.grid = dim(j.at("grid"));
    c.block = dim(j.at("block"));
    c.buffers = j.at("buffers").get<std::vector<uint32_t>>();
    c.ints = j.value("ints", std::vector<int32_t>{});
    for (const nlohmann::json& e : j.at("expect")) c.expect.push_back(e.at("kind"));
    if (j.contains("explore")) {
      EXPECT_TRUE(parse_exploration(j.at("explore").get<std::string>(), &c.explore));
      c.schedules = j.at("schedules").get<uint32_t>();
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

// Runs `c` under `schedules` (default: the case's own); the findings of all of them.
std::vector<SyncFinding> run_case(const SyncCase& c,
                                  std::vector<sim::WarpSchedule> schedules = {}) {
  if (schedules.empty()) {
    schedules = plan(c);
    // A fix must also stay clean (and finish) under PCT at depths 1 and 2.
    if (c.expect.empty() && c.explore == sim::WarpOrder::Random) {
      for (const sim::WarpSchedule& s : race_schedules(4, 1, sim::WarpOrder::Pct))
        if (s.order == sim::WarpOrder::Pct) schedules.push_back(s);
    }
  }
  SyncMonitor monitor;
  sim::SimulatorOptions options;
  options.observer = &monitor;
  options.instruction_budget = 10'000'000;
  sim::Device device(options);
  std::string stem = c.file.substr(0, c.file.size() - 3);
  auto text = read_file(std::string(KILN_SYNC_DYNAMIC_PTX_DIR) + "/" + stem + ".ptx");
  EXPECT_TRUE(text.ok()) << text.error().message;
  if (!text.ok()) return {};
  auto module = device.load_module(*text, stem);
  EXPECT_TRUE(module.ok()) << module.error().message;
  if (!module.ok()) return {};
  auto info = device.kernel(*module, c.kernel);
  EXPECT_TRUE(info.ok()) << info.error().message;
  if (!info.ok()) return {};
  std::vector<uint64_t> buffers;
  for (uint32_t bytes : c.buffers) buffers.push_back(*device.allocate(bytes));
  std::vector<std::byte> params(info->param_bytes);
  for (size_t i = 0; i < info->params.size(); ++i) {
    const sim::ParamSlot& slot = info->params[i];
    if (i < buffers.size()) {
      std::memcpy(params.data() + slot.offset, &buffers[i], 8);
    } else if (i - buffers.size() < c.ints.size()) {
      std::memcpy(params.data() + slot.offset, &c.ints[i - buffers.size()], 4);
    }
  }
  for (const sim::WarpSchedule& s : schedules) {
    for (size_t i = 0; i < buffers.size(); ++i) (void)device.fill(buffers[i], 0, c.buffers[i]);
    monitor.set_schedule(s);
    sim::LaunchConfig config;
    config.grid = c.grid;
    config.block = c.block;
    auto report = device.launch(*module, c.kernel, config, params);
    EXPECT_TRUE(report.ok()) << report.error().message;
    if (report.ok() && c.expect.empty()) {
      EXPECT_TRUE(report->ok()) << c.kernel << " under " << schedule_label(s) << ": "
                                << report->faults[0].message;
    }
  }
  return monitor.findings();
}

std::string describe(const std::vector<SyncFinding>& findings) {
  std::string out;
  for (const SyncFinding& f : findings) {
    out += "\n  " + f.kind + " (" + f.schedule + ", PTX line " + std::to_string(f.site.ptx_line) +
           "): " + f.message;
  }
  return out.empty() ? " none" : out;
}

class SyncDynamicCorpusTest : public ::testing::TestWithParam<SyncCase> {};

TEST_P(SyncDynamicCorpusTest, FindsWhatTheManifestExpects) {
  const SyncCase& c = GetParam();
  std::vector<SyncFinding> findings = run_case(c);
  if (c.expect.empty()) {
    EXPECT_TRUE(findings.empty()) << c.kernel << " should be clean; found:" << describe(findings);
    return;
  }
  for (const std::string& kind : c.expect) {
    bool seen = false;
    for (const SyncFinding& f : findings) {
      if (f.kind != kind) continue;
      seen = true;
      // Every finding names the operation with its instruction and .cu line, and a fix.
      EXPECT_NE(f.site.ptx_line, 0u) << f.message;
      EXPECT_FALSE(f.site.instruction.empty()) << f.message;
      EXPECT_FALSE(f.site.source.empty()) << f.message;
      EXPECT_FALSE(f.fix.empty());
    }
    EXPECT_TRUE(seen) << c.kernel << ": expected " << kind << "; found:" << describe(findings);
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, SyncDynamicCorpusTest, ::testing::ValuesIn(corpus()),
                         [](const ::testing::TestParamInfo<SyncCase>& param) {
                           return param.param.kernel;
                         });

TEST(SyncDynamicCorpus, HasAtLeastEightPairs) { EXPECT_GE(corpus().size(), 16u); }

// A producer's bar.arrive with another count than the consumers' bar.sync: the barrier
// completes with 96 threads at a count of 96 (the last arrival's) under every schedule, so only
// the check at each arrival finds it; the finding names both instructions.
TEST(SyncDynamicCorpus, AnArrivalWithAnotherCountIsFoundWhereItArrives) {
  bool ran = false;
  for (const SyncCase& c : corpus()) {
    if (c.kernel != "named_barrier_arrive_count_bug") continue;
    ran = true;
    const std::vector<SyncFinding> findings = run_case(c);
    ASSERT_EQ(findings.size(), 1u) << describe(findings);
    const SyncFinding& f = findings[0];
    EXPECT_EQ(f.kind, "barrier_count_mismatch");
    EXPECT_NE(f.message.find("arrived at named barrier 1 with a thread count of 96 after 32 "
                             "thread(s) had arrived at it with a count of 64"),
              std::string::npos)
        << f.message;
    EXPECT_EQ(f.site.instruction, "bar.sync");       // a consumer, with 96
    EXPECT_EQ(f.earlier.instruction, "bar.arrive");  // the producer, with 64
    EXPECT_FALSE(f.site.source.empty());
    EXPECT_EQ(f.schedules.size(), 3u);  // every default schedule
  }
  EXPECT_TRUE(ran);
}

// The headline case: the overrun names the consumer's wait and the producer's operation that
// completed the phase after the one the consumer wanted, both with .cu lines.
TEST(SyncDynamicCorpus, PhaseOverrunNamesTheWaitAndTheOverrunningProducer) {
  for (const SyncCase& c : corpus()) {
    if (c.kernel != "tma_pipeline_bug") continue;
    std::vector<SyncFinding> findings = run_case(c);
    for (const SyncFinding& f : findings) {
      if (f.kind != "phase_overrun") continue;
      EXPECT_EQ(f.object, "mbarrier");
      EXPECT_EQ(f.schedule, "in_order");
      EXPECT_NE(f.site.instruction.find("mbarrier.try_wait"), std::string::npos);
      EXPECT_TRUE(f.has_earlier);
      EXPECT_NE(f.earlier.source, f.site.source);
      EXPECT_GE(f.site.thread.x, 32u);  // a consumer thread
      return;
    }
    FAIL() << "no phase_overrun:" << describe(findings);
  }
  FAIL() << "tma_pipeline_bug is missing from the manifest";
}

const SyncCase* find_case(const std::vector<SyncCase>& cases, const std::string& kernel) {
  for (const SyncCase& c : cases)
    if (c.kernel == kernel) return &c;
  return nullptr;
}

bool has_kind(const std::vector<SyncFinding>& findings, const std::string& kind) {
  return std::any_of(findings.begin(), findings.end(),
                     [&](const SyncFinding& f) { return f.kind == kind; });
}

// An epilogue warp without back-pressure is overrun only when it is delayed for two batches
// while the producer and the other consumer run ahead: the in-order, reversed and random
// schedules (the default seed and seven more) never do that, PCT and the exhaustive priority
// orders do, and the finding's schedule and seed replay it alone.
TEST(SyncDynamicCorpus, BatchOverrunIsFoundOnlyBySystematicExploration) {
  const std::vector<SyncCase> cases = corpus();
  const SyncCase* bug = find_case(cases, "batch_overrun_bug");
  const SyncCase* fixed = find_case(cases, "batch_overrun_fixed");
  ASSERT_NE(bug, nullptr);
  ASSERT_NE(fixed, nullptr);
  const std::vector<SyncFinding> random = run_case(*bug, race_schedules(10, 1));
  EXPECT_FALSE(has_kind(random, "phase_overrun")) << describe(random);

  const std::vector<SyncFinding> pct = run_case(*bug, race_schedules(10, 1, sim::WarpOrder::Pct));
  ASSERT_TRUE(has_kind(pct, "phase_overrun")) << describe(pct);
  const SyncFinding& found = pct.front();
  EXPECT_EQ(found.schedule, "pct");
  sim::WarpSchedule replay;
  ASSERT_TRUE(parse_schedule_label(found.schedules.front(), &replay)) << found.schedules.front();
  EXPECT_NE(found.site.instruction.find("mbarrier.try_wait"), std::string::npos);
  EXPECT_GE(found.site.thread.x, 64u);  // warp 2, the delayed waiter
  EXPECT_EQ(replay.seed, found.seed);
  EXPECT_TRUE(has_kind(run_case(*bug, {replay}), "phase_overrun"))
      << found.schedules.front() << " does not replay it";

  // Three warps have six priority orders; some of them delay warp 2.
  const std::vector<SyncFinding> all =
      run_case(*bug, race_schedules(8, 1, sim::WarpOrder::Exhaustive));
  EXPECT_TRUE(has_kind(all, "phase_overrun")) << describe(all);

  for (sim::WarpOrder explore : {sim::WarpOrder::Pct, sim::WarpOrder::Exhaustive}) {
    const std::vector<SyncFinding> clean = run_case(*fixed, race_schedules(10, 1, explore));
    EXPECT_TRUE(clean.empty()) << describe(clean);
  }
}

TEST(SyncDynamicCorpus, DeadlockSaysWhereEveryWarpWaits) {
  for (const SyncCase& c : corpus()) {
    if (c.kernel != "deadlock_bug") continue;
    std::vector<SyncFinding> findings = run_case(c);
    for (const SyncFinding& f : findings) {
      if (f.kind != "deadlock") continue;
      ASSERT_EQ(f.stuck.size(), 2u) << f.message;
      EXPECT_NE(f.stuck[0].waits_on, f.stuck[1].waits_on);
      EXPECT_NE(f.stuck[0].site.ptx_line, f.stuck[1].site.ptx_line);
      EXPECT_NE(f.message.find("barrier 1"), std::string::npos) << f.message;
      EXPECT_NE(f.message.find("barrier 2"), std::string::npos) << f.message;
      return;
    }
    FAIL() << "no deadlock:" << describe(findings);
  }
  FAIL() << "deadlock_bug is missing from the manifest";
}

}  // namespace
}  // namespace kiln::check
