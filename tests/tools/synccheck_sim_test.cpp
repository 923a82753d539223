// synccheck's sim engines (sync_sim_engine.h): the fp16_gemm starter's sim workloads under
// kiln-sim-run --synccheck, alone ("sim") and with the static engine ("static+sim").
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "sync_sim_engine.h"
#include "toolbox_fixture.h"

namespace kiln::tools {
namespace {

using json = nlohmann::json;

// The sim engines: the fp16_gemm starter's sim workloads under kiln-sim-run --synccheck.
std::string starter_with(const std::string& from, const std::string& to) {
  std::ifstream in(std::string(KILN_TASKS_DIR) + "/fp16_gemm/starter.cu");
  std::stringstream text;
  text << in.rdbuf();
  std::string source = text.str();
  const size_t at = source.find(from);
  if (at != std::string::npos) source.replace(at, from.size(), to);
  return source;
}

TEST(SyncFindingTest, EveryDynamicKindHasItsFindingKindAndKeepsItAsTheCause) {
  const std::pair<const char*, check::FindingKind> kinds[] = {
      {"phase_overrun", check::FindingKind::MbarrierPhaseOverrun},
      {"over_arrival", check::FindingKind::MbarrierOverArrival},
      {"tx_never_arrived", check::FindingKind::MbarrierTxNeverArrived},
      {"tx_overflow", check::FindingKind::MbarrierTxOverflow},
      {"init_in_use", check::FindingKind::MbarrierInitInUse},
      {"inval_in_use", check::FindingKind::MbarrierInitInUse},
      {"mid_phase_at_exit", check::FindingKind::MbarrierMidPhaseAtExit},
      {"uninitialized_mbarrier", check::FindingKind::MbarrierUninitialized},
      {"barrier_divergence", check::FindingKind::BarrierDivergence},
      {"exit_at_barrier", check::FindingKind::ExitAtBarrier},
      {"barrier_count_mismatch", check::FindingKind::NamedBarrierMismatch},
      {"deadlock", check::FindingKind::Deadlock},
      {"a_kind_from_a_newer_kiln_sim_run", check::FindingKind::Incomplete}};
  for (const auto& [kind, expected] : kinds) {
    const json finding{{"kind", kind},
                       {"kernel", "k"},
                       {"site", {{"ptx_line", 12}, {"instruction", "mbarrier.try_wait"}}},
                       {"message", "what happened"},
                       {"schedules", {"in_order"}}};
    const check::Finding f = sync_finding(finding, [](std::string text) { return text; });
    EXPECT_EQ(f.kind, expected) << kind;
    EXPECT_EQ(f.cause, kind);
    // The text names the kind, never the compute-sanitizer catch-all.
    const std::string text = check::to_string(f);
    EXPECT_NE(text.find(std::string(check::finding_kind_name(expected))), std::string::npos)
        << text;
    EXPECT_EQ(text.find("sanitizer_error"), std::string::npos) << text;
  }
}

class SynccheckSimTest : public NvccToolboxTest {
 protected:
  void configure(ToolboxConfig& config) override { config.sim_runner = KILN_SIM_RUN; }
};

TEST_F(SynccheckSimTest, StaticPlusSimOnTheStarterIsClean) {
  auto result =
      call_tool("synccheck", {{"candidate", std::string(KILN_TASKS_DIR) + "/fp16_gemm/starter.cu"},
                              {"engine", "static+sim"},
                              {"schedules", 1},
                              {"workloads", {"64x64x64"}}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["engine"], "static+sim");
  EXPECT_EQ(result.structured["verdict"], "clean") << result.text;
  EXPECT_EQ(result.structured["schedules"], 1);
  EXPECT_GT(result.structured["coverage"]["uniform_barriers"].get<int>(), 0);
}

TEST_F(SynccheckSimTest, SimFindsABarrierOnlyTheFirstRowReachesWithItsLine) {
  auto result =
      call_tool("synccheck",
                {{"source", starter_with("__syncthreads();  // the tiles are overwritten",
                                         "if (threadIdx.y == 0) __syncthreads();  // diverged:")},
                 {"engine", "sim"},
                 {"schedules", 1},
                 {"workloads", {"64x64x64"}}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["verdict"], "findings") << result.text;
  ASSERT_FALSE(result.structured["findings"].empty());
  bool seen = false;
  for (const json& f : result.structured["findings"]) {
    EXPECT_EQ(f["engine"], "sim");
    if (f["kind"] == "barrier_divergence") {
      seen = true;
      EXPECT_EQ(f["file"], "kernel.cu") << f.dump(1);
      EXPECT_GT(f["line"].get<int>(), 0);
    }
  }
  EXPECT_TRUE(seen) << result.structured.dump(1);
  EXPECT_EQ(result.structured.dump().find("/tmp/"), std::string::npos) << "temporary paths leaked";
}

// A guard on threadIdx that never holds at run time: the static engine flags the barriers after
// it, the run shows all threads at every barrier, and the combined result says so.
TEST_F(SynccheckSimTest, AStaticDivergenceTheRunDidNotSeeIsMarkedNotObserved) {
  auto result = call_tool("synccheck", {{"source", starter_with("  float acc[kRowsPerThread]",
                                                                "  if (tx + K < 0) return;\n"
                                                                "  float acc[kRowsPerThread]")},
                                        {"engine", "static+sim"},
                                        {"schedules", 1},
                                        {"workloads", {"64x64x64"}}});
  ASSERT_FALSE(result.is_error) << result.text;
  bool static_seen = false;
  for (const json& f : result.structured["findings"]) {
    if (f["engine"] != "static" || f["kind"] != "barrier_divergence") continue;
    static_seen = true;
    EXPECT_EQ(f["observed_at_run_time"], false) << f.dump(1);
  }
  ASSERT_TRUE(static_seen) << result.structured.dump(1);
  EXPECT_NE(result.structured.dump().find("not observed at run time"), std::string::npos);
}

// The sim engine's kiln-sim-run is the one the tool config names (as racecheck's and
// simulate's), not only the one next to the kiln binary.
class SynccheckSimRunnerPathTest : public NvccToolboxTest {
 protected:
  void configure(ToolboxConfig& config) override {
    config.sim_runner = "/nonexistent/configured/kiln-sim-run";
  }
};

TEST_F(SynccheckSimRunnerPathTest, TheConfiguredSimRunnerIsTheOneStarted) {
  auto result =
      call_tool("synccheck", {{"candidate", std::string(KILN_TASKS_DIR) + "/fp16_gemm/starter.cu"},
                              {"engine", "sim"},
                              {"schedules", 1},
                              {"workloads", {"64x64x64"}}});
  EXPECT_TRUE(result.is_error) << result.text;
  EXPECT_NE(result.text.find("cannot start /nonexistent/configured/kiln-sim-run"),
            std::string::npos)
      << result.text;
}

}  // namespace
}  // namespace kiln::tools
