// racecheck's sim engine: the task's sim workloads under kiln-sim-run --racecheck, its races as
// check findings (race_sim_engine.h).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "race_sim_engine.h"
#include "toolbox_fixture.h"

namespace kiln::tools {
namespace {

using json = nlohmann::json;

std::string starter_source() {
  std::ifstream in(std::string(KILN_TASKS_DIR) + "/fp16_gemm/starter.cu");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The starter without the barrier that ends each K step: the next step's tile stores race with
// other threads' loads of the previous tile.
std::string starter_without_its_second_barrier() {
  std::string source = starter_source();
  const size_t at = source.rfind("__syncthreads();");
  if (at != std::string::npos) source.replace(at, 16, "/* barrier removed */");
  return source;
}

TEST(RaceFinding, NamesBothAccessesTheirLinesAndTheFix) {
  const json race = {{"kind", "war"},
                     {"cause", "missing_barrier"},
                     {"space", "shared"},
                     {"kernel", "gemm"},
                     {"address", "0x39c"},
                     {"bytes", 4},
                     {"first",
                      {{"access", "read"},
                       {"instruction", "ld.shared.f32"},
                       {"ptx_line", 484},
                       {"source", "/tmp/call-x/kernel.cu:47:7"}}},
                     {"second",
                      {{"access", "write"},
                       {"instruction", "st.shared.f32"},
                       {"ptx_line", 304},
                       {"source", "/tmp/call-x/kernel.cu:41:7"}}},
                     {"schedules", {"in_order", "random:1"}},
                     {"occurrences", 12},
                     {"fix", "put __syncthreads() between them"}};
  const check::Finding f = race_finding(race, [](std::string text) {
    const std::string from = "/tmp/call-x/";
    if (text.rfind(from, 0) == 0) text = text.substr(from.size());
    return text;
  });
  EXPECT_EQ(f.kind, check::FindingKind::DataRace);
  EXPECT_EQ(f.source_file, "kernel.cu");
  EXPECT_EQ(f.source_line, 41u);
  EXPECT_EQ(f.source_column, 7u);
  EXPECT_EQ(f.ptx_line, 304u);
  EXPECT_EQ(f.instruction, "st.shared.f32");
  for (const char* part :
       {"WAR race (missing_barrier)", "4 byte(s) of shared memory at 0x39c",
        "read at kernel.cu:47:7", "write at kernel.cu:41:7", "in_order, random:1", "12 times"})
    EXPECT_NE(f.message.find(part), std::string::npos) << part << " in " << f.message;
  EXPECT_EQ(f.fix_hint, "put __syncthreads() between them");
  // No .cu line (no -lineinfo): the PTX line stands in, and nothing is invented.
  json bare = race;
  bare["second"].erase("source");
  const check::Finding g = race_finding(bare, [](std::string text) { return text; });
  EXPECT_TRUE(g.source_file.empty());
  EXPECT_EQ(g.source_line, 0u);
  EXPECT_NE(g.message.find("write at PTX line 304"), std::string::npos) << g.message;
  EXPECT_EQ(g.cause, "missing_barrier");
  // The async proxy and a missing fence have kinds of their own.
  for (const auto& [cause, kind] :
       {std::pair{"async_proxy", check::FindingKind::AsyncProxyRace},
        std::pair{"missing_proxy_fence", check::FindingKind::AsyncProxyRace},
        std::pair{"missing_fence", check::FindingKind::MissingFence},
        std::pair{"cross_cta", check::FindingKind::DataRace},
        std::pair{"warp_race", check::FindingKind::DataRace}}) {
    json other = race;
    other["cause"] = cause;
    const check::Finding h = race_finding(other, [](std::string text) { return text; });
    EXPECT_EQ(h.kind, kind) << cause;
    EXPECT_EQ(h.cause, cause);
    EXPECT_NE(check::to_string(h).find(std::string(check::finding_kind_name(kind))),
              std::string::npos);
  }
}

class RacecheckSimTest : public NvccToolboxTest {
 protected:
  void configure(ToolboxConfig& config) override { config.sim_runner = KILN_SIM_RUN; }
};

TEST_F(RacecheckSimTest, TheStarterIsCleanUnderEveryScheduleAndSimIsTheDefaultWithoutARunner) {
  const std::string starter = std::string(KILN_TASKS_DIR) + "/fp16_gemm/starter.cu";
  auto result = call_tool("racecheck", {{"candidate", starter}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["engine"], "sim");
  EXPECT_EQ(result.structured["verdict"], "clean") << result.text;
  EXPECT_EQ(result.structured["schedules"], 3);
  EXPECT_EQ(result.structured["seed"], 1);
}

TEST_F(RacecheckSimTest, AMissingBarrierIsARaceWithItsCuLine) {
  auto result = call_tool("racecheck", {{"source", starter_without_its_second_barrier()},
                                        {"engine", "sim"},
                                        {"schedules", 2},
                                        {"workloads", {"64x64x64"}}});
  ASSERT_FALSE(result.is_error) << result.text;  // a check that found something did its work
  EXPECT_EQ(result.structured["verdict"], "findings") << result.text;
  EXPECT_EQ(result.structured["schedules"], 2);
  ASSERT_FALSE(result.structured["findings"].empty());
  const json& first = result.structured["findings"][0];
  EXPECT_EQ(first["kind"], "data_race") << first.dump(1);
  EXPECT_NE(first.dump().find("kernel.cu"), std::string::npos) << first.dump(1);
  EXPECT_EQ(first.dump().find("/tmp/"), std::string::npos) << "temporary paths leaked";
  EXPECT_NE(result.text.find("shared memory"), std::string::npos) << result.text;
}

TEST_F(RacecheckSimTest, PctExplorationSaysWhatRanAndWhichScheduleFoundWhat) {
  auto result = call_tool("racecheck", {{"source", starter_without_its_second_barrier()},
                                        {"engine", "sim"},
                                        {"schedules", 3},
                                        {"explore", "pct"},
                                        {"depth", 2},
                                        {"workloads", {"64x64x64"}}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["verdict"], "findings") << result.text;
  const json& exploration = result.structured["exploration"];
  EXPECT_EQ(exploration["kind"], "pct") << exploration.dump(1);
  EXPECT_EQ(exploration["ran"], 1);
  EXPECT_EQ(exploration["depth"], 2);
  ASSERT_FALSE(exploration["found"].empty()) << exploration.dump(1);
  EXPECT_EQ(exploration["found"][0]["schedule"], "in_order");  // the first to find it
  EXPECT_NE(result.text.find("pct:1:d1"), std::string::npos) << result.text;  // saw it too
}

TEST_F(RacecheckSimTest, AnUnknownWorkloadIsRefusedWithTheEngineNamed) {
  auto result = call_tool(
      "racecheck", {{"source", starter_source()}, {"engine", "sim"}, {"workloads", {"1x1x1"}}});
  ASSERT_TRUE(result.is_error);
  EXPECT_EQ(result.structured["engine"], "sim");
  EXPECT_NE(result.text.find("no sim_workload '1x1x1'"), std::string::npos) << result.text;
}

}  // namespace
}  // namespace kiln::tools
