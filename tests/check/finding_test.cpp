#include "kiln/check/finding.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kiln::check {
namespace {

Finding sample() {
  Finding f;
  f.kind = FindingKind::CollectiveMask;
  f.function = "reduce";
  f.source_file = "/work/run/kernel.cu";
  f.source_line = 42;
  f.source_column = 7;
  f.ptx_line = 118;
  f.instruction = "shfl.sync.down.b32 %r1, %r2, 16, 31, -1;";
  f.message = "mask names absent lanes";
  f.fix_hint = "pass the active mask";
  return f;
}

TEST(Finding, KindNamesAreTheCorpusVocabulary) {
  EXPECT_EQ(finding_kind_name(FindingKind::BarrierDivergence), "barrier_divergence");
  EXPECT_EQ(finding_kind_name(FindingKind::CollectiveDivergence), "collective_divergence");
  EXPECT_EQ(finding_kind_name(FindingKind::CollectiveMask), "collective_mask");
  EXPECT_EQ(finding_kind_name(FindingKind::NamedBarrierMismatch), "named_barrier_mismatch");
  EXPECT_EQ(finding_kind_name(FindingKind::MbarrierUninitialized), "mbarrier_uninitialized");
  EXPECT_EQ(finding_kind_name(FindingKind::MbarrierInitFence), "mbarrier_init_fence");
  EXPECT_EQ(finding_kind_name(FindingKind::AsyncCopyUnwaited), "async_copy_unwaited");
  EXPECT_EQ(finding_kind_name(FindingKind::BulkCopyNoExpectTx), "bulk_copy_no_expect_tx");
  EXPECT_EQ(finding_kind_name(FindingKind::WgmmaFence), "wgmma_fence");
}

TEST(Finding, TheDynamicEnginesKindsHaveNamesOfTheirOwn) {
  const std::pair<FindingKind, const char*> kinds[] = {
      {FindingKind::DataRace, "data_race"},
      {FindingKind::AsyncProxyRace, "async_proxy_race"},
      {FindingKind::MissingFence, "missing_fence"},
      {FindingKind::MbarrierPhaseOverrun, "mbarrier_phase_overrun"},
      {FindingKind::MbarrierOverArrival, "mbarrier_over_arrival"},
      {FindingKind::MbarrierTxNeverArrived, "mbarrier_tx_never_arrived"},
      {FindingKind::MbarrierTxOverflow, "mbarrier_tx_overflow"},
      {FindingKind::MbarrierInitInUse, "mbarrier_init_in_use"},
      {FindingKind::MbarrierMidPhaseAtExit, "mbarrier_mid_phase_at_exit"},
      {FindingKind::ExitAtBarrier, "exit_at_barrier"},
      {FindingKind::Deadlock, "deadlock"}};
  for (const auto& [kind, name] : kinds) {
    EXPECT_EQ(finding_kind_name(kind), name);
    Finding f = sample();
    f.kind = kind;
    EXPECT_EQ(to_json(f)["kind"], name);
    EXPECT_NE(to_string(f).find(std::string("error ") + name + " "), std::string::npos)
        << to_string(f);
  }
}

TEST(Finding, JsonCarriesSourceAndPtxLocations) {
  const nlohmann::json j = to_json(sample());
  EXPECT_EQ(j["kind"], "collective_mask");
  EXPECT_EQ(j["severity"], "error");
  EXPECT_EQ(j["file"], "/work/run/kernel.cu");
  EXPECT_EQ(j["line"], 42);
  EXPECT_EQ(j["column"], 7);
  EXPECT_EQ(j["ptx_line"], 118);
  EXPECT_EQ(j["fix_hint"], "pass the active mask");
}

TEST(Finding, JsonLeavesOutTheFileWithoutLineInfo) {
  Finding f = sample();
  f.source_file.clear();
  EXPECT_FALSE(to_json(f).contains("file"));
}

TEST(Finding, TextNamesSeverityKindAndPlace) {
  EXPECT_EQ(to_string(sample()),
            "error collective_mask /work/run/kernel.cu:42:7 (ptx 118): mask names absent lanes");
}

TEST(CheckReport, VerdictFollowsFindingsThenNotes) {
  CheckReport report;
  report.finish();
  EXPECT_EQ(report.verdict, Verdict::Clean);
  report.notes.push_back("an indirect call was not followed");
  report.finish();
  EXPECT_EQ(report.verdict, Verdict::Incomplete);
  report.findings.push_back(sample());
  report.finish();
  EXPECT_EQ(report.verdict, Verdict::Findings);
  EXPECT_EQ(to_json(report)["verdict"], "findings");
}

}  // namespace
}  // namespace kiln::check
