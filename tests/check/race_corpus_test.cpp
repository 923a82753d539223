// The tests/corpus/race pairs (manifest.json): every kernel runs on the simulator under the
// race detector with the default schedules; a bug must yield each expected finding (kind,
// space, cause, as far as the manifest names them), its fix nothing at all.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/file.h"
#include "kiln/check/dynamic_racecheck.h"
#include "kiln/sim/device.h"
#include "kiln/sim/memory_observer.h"

namespace kiln::check {
namespace {

struct RaceCase {
  std::string file, kernel;
  sim::Dim3 grid, block;
  std::vector<uint32_t> buffers;
  std::vector<int32_t> ints;
  std::vector<std::map<std::string, std::string>> expect;
};

void PrintTo(const RaceCase& c, std::ostream* os) { *os << c.kernel; }

sim::Dim3 dim(const nlohmann::json& j) {
  return {j.at(0).get<uint32_t>(), j.at(1).get<uint32_t>(), j.at(2).get<uint32_t>()};
}

std::vector<RaceCase> corpus() {
  std::vector<RaceCase> cases;
  std::ifstream in(std::string(KILN_RACE_CORPUS_SOURCE_DIR) + "/manifest.json");
  if (!in) return cases;
  nlohmann::json manifest = nlohmann::json::parse(in);
  for (const nlohmann::json& j : manifest.at("cases")) {
    RaceCase c;
    c.file = j.at("file").get<std::string>();
    c.kernel = j.at("kernel").get<std::string>();
    c.grid = dim(j.at("grid"));
    c.block = dim(j.at("block"));
    c.buffers = j.at("buffers").get<std::vector<uint32_t>>();
    c.ints = j.value("ints", std::vector<int32_t>{});
    for (const nlohmann::json& e : j.at("expect")) {
      c.expect.push_back(e.get<std::map<std::string, std::string>>());
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

// Runs `c` under every default schedule; the findings of all of them.
std::vector<RaceFinding> run_case(const RaceCase& c) {
  RaceDetector detector;
  sim::SimulatorOptions options;
  options.observer = &detector;
  options.instruction_budget = 10'000'000;
  sim::Device device(options);
  std::string stem = c.file.substr(0, c.file.size() - 3);
  auto text = read_file(std::string(KILN_RACE_CORPUS_PTX_DIR) + "/" + stem + ".ptx");
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
  // A fix must also stay clean (and finish) under priority schedules: PCT at depths 1 and 2.
  std::vector<sim::WarpSchedule> schedules = race_schedules(3, 1);
  if (c.expect.empty()) {
    for (const sim::WarpSchedule& s : race_schedules(4, 1, sim::WarpOrder::Pct))
      if (s.order == sim::WarpOrder::Pct) schedules.push_back(s);
  }
  for (const sim::WarpSchedule& s : schedules) {
    for (size_t i = 0; i < buffers.size(); ++i) (void)device.fill(buffers[i], 0, c.buffers[i]);
    detector.set_schedule(s);
    sim::LaunchConfig config;
    config.grid = c.grid;
    config.block = c.block;
    auto report = device.launch(*module, c.kernel, config, params);
    EXPECT_TRUE(report.ok()) << report.error().message;
    if (report.ok()) {
      EXPECT_TRUE(report->ok()) << c.kernel << " under " << schedule_label(s) << ": "
                                << report->faults[0].message;
    }
  }
  return detector.findings();
}

std::string describe(const std::vector<RaceFinding>& findings) {
  std::string out;
  for (const RaceFinding& f : findings) {
    out += "\n  " + f.kind + " " + f.cause + " " + f.space + " (" + f.schedule + "): " + f.message;
  }
  return out.empty() ? " none" : out;
}

class RaceCorpusTest : public ::testing::TestWithParam<RaceCase> {};

TEST_P(RaceCorpusTest, FindsWhatTheManifestExpects) {
  const RaceCase& c = GetParam();
  std::vector<RaceFinding> findings = run_case(c);
  if (c.expect.empty()) {
    EXPECT_TRUE(findings.empty()) << c.kernel << " should be clean; found:" << describe(findings);
    return;
  }
  for (const auto& want : c.expect) {
    bool seen = false;
    for (const RaceFinding& f : findings) {
      std::map<std::string, std::string> got = {
          {"kind", f.kind}, {"space", f.space}, {"cause", f.cause}};
      bool match = true;
      for (const auto& [key, value] : want) match = match && got[key] == value;
      if (match) {
        seen = true;
        // Every finding names both sides with their instructions and .cu lines.
        EXPECT_NE(f.first.ptx_line, 0u);
        EXPECT_NE(f.second.ptx_line, 0u);
        EXPECT_FALSE(f.second.source.empty()) << f.message;
        EXPECT_FALSE(f.fix.empty());
      }
    }
    EXPECT_TRUE(seen) << c.kernel << ": expected " << nlohmann::json(want).dump()
                      << "; found:" << describe(findings);
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, RaceCorpusTest, ::testing::ValuesIn(corpus()),
                         [](const ::testing::TestParamInfo<RaceCase>& param) {
                           return param.param.kernel;
                         });

TEST(RaceCorpus, HasAtLeastThirtyPairs) { EXPECT_GE(corpus().size(), 60u); }

TEST(RaceCorpus, FindingNamesEveryScheduleThatSawItAndBothSides) {
  for (const RaceCase& c : corpus()) {
    if (c.kernel != "smem_raw_bug") continue;
    std::vector<RaceFinding> findings = run_case(c);
    ASSERT_FALSE(findings.empty());
    const RaceFinding& f = findings.front();
    EXPECT_EQ(f.schedule, "in_order");
    // Reversed meets the same pair of lines (warp 1 reads before warp 0 writes).
    ASSERT_GE(f.schedules.size(), 2u);
    EXPECT_EQ(f.schedules[0], "in_order");
    EXPECT_EQ(f.schedules[1], "reversed");
    EXPECT_GT(f.occurrences, 1u);
    EXPECT_NE(f.first.source, f.second.source);  // the store and the load, by .cu line
    EXPECT_NE(f.first.thread.x / 32, f.second.thread.x / 32);
    return;
  }
  FAIL() << "smem_raw_bug is missing from the manifest";
}

}  // namespace
}  // namespace kiln::check
