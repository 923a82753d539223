// ncu_report.h: Nsight Compute's CSV pages turned into per-kernel summaries.
#include "kiln/worker/ncu_report.h"

#include <gtest/gtest.h>

namespace kiln::worker {
namespace {

// The raw page: program output first, then a header, a units row and one row per kernel.
constexpr const char* kRaw = R"csv(==PROF== Connected to process 4242 (/opt/kiln/kiln-worker)
kiln-worker --run-once: candidate ran 1 time(s) on 4096x4096x4096
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__throughput.avg.pct_of_peak_sustained_elapsed","gpu__time_duration.sum","launch__registers_per_thread","launch__shared_mem_per_block_dynamic","launch__shared_mem_per_block_static","lts__throughput.avg.pct_of_peak_sustained_elapsed","sm__throughput.avg.pct_of_peak_sustained_elapsed","sm__warps_active.avg.pct_of_peak_sustained_active","sm__maximum_warps_per_active_cycle_pct","sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","smsp__average_warps_issue_stalled_not_issued_per_issue_active.ratio"
"","","","","","","","","","","","%","nsecond","register/thread","byte","byte","%","%","%","%","%","inst","inst","inst"
"0","4242","kiln-worker","127.0.0.1","gemm_tn_kernel(const __half *, const __half *, __half *, long, long, long)","1","13","(32, 8, 1)","(128, 128, 1)","0","9.0","12.5","13,741,152","40","0","8,448","31.2","64.3","48.9","50","0","2.75","1.5","9"
)csv";

TEST(NcuReport, ParsesTheRawPage) {
  std::string error;
  const auto kernels = NcuReport::parse(kRaw, &error);
  ASSERT_EQ(kernels.size(), 1u) << error;
  const NcuKernel& k = kernels[0];
  EXPECT_EQ(k.name, "gemm_tn_kernel(const __half *, const __half *, __half *, long, long, long)");
  EXPECT_EQ(k.block, "(32, 8, 1)");
  EXPECT_NEAR(k.duration_us, 13741.152, 1e-6);
  EXPECT_EQ(k.registers, 40);
  EXPECT_EQ(k.shared_static_bytes, 8448);
  EXPECT_NEAR(k.dram_pct, 12.5, 1e-9);
  EXPECT_NEAR(k.l2_pct, 31.2, 1e-9);
  EXPECT_NEAR(k.sm_pct, 64.3, 1e-9);
  EXPECT_NEAR(k.achieved_occupancy_pct, 48.9, 1e-9);
  EXPECT_NEAR(k.theoretical_occupancy_pct, 50, 1e-9);
  ASSERT_EQ(k.top_stalls.size(), 2u);  // "not_issued" is not a stall reason
  EXPECT_EQ(k.top_stalls[0].reason, "long_scoreboard");
  EXPECT_EQ(k.top_stalls[1].reason, "barrier");
  const nlohmann::json j = k.to_json();
  EXPECT_EQ(j["top_stalls"][0]["reason"], "long_scoreboard");
  EXPECT_FALSE(j.contains("metrics"));
  EXPECT_TRUE(k.to_json(true).contains("metrics"));
}

TEST(NcuReport, ParsesTheDetailsPage) {
  const std::string details =
      R"csv("ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value")csv"
      "\n"
      R"csv("0","1","w","h","k1","1","7","(256, 1, 1)","(80, 1, 1)","0","9.0","GPU Speed Of Light Throughput","Duration","usecond","10.50")csv"
      "\n"
      R"csv("0","1","w","h","k1","1","7","(256, 1, 1)","(80, 1, 1)","0","9.0","GPU Speed Of Light Throughput","DRAM Throughput","%","91.2")csv"
      "\n"
      R"csv("1","1","w","h","k2","1","7","(128, 1, 1)","(8, 1, 1)","0","9.0","Occupancy","Achieved Occupancy","%","22.0")csv"
      "\n";
  const auto kernels = NcuReport::parse(details);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_NEAR(kernels[0].duration_us, 10.5, 1e-9);
  EXPECT_NEAR(kernels[0].dram_pct, 91.2, 1e-9);
  EXPECT_EQ(kernels[1].name, "k2");
  EXPECT_NEAR(kernels[1].achieved_occupancy_pct, 22.0, 1e-9);
}

TEST(NcuReport, NoHeaderIsAnError) {
  std::string error;
  EXPECT_TRUE(NcuReport::parse("==ERROR== the profiler failed\n", &error).empty());
  EXPECT_NE(error.find("header"), std::string::npos);
  EXPECT_TRUE(NcuReport::parse("").empty());
}

TEST(NcuReport, CsvAndNumbers) {
  EXPECT_EQ(NcuReport::split_csv_line(R"csv("a","b,c","d""e",)csv"),
            (std::vector<std::string>{"a", "b,c", "d\"e", ""}));
  double v = 0;
  EXPECT_TRUE(NcuReport::parse_number("1,234.5", &v));
  EXPECT_EQ(v, 1234.5);
  EXPECT_FALSE(NcuReport::parse_number("n/a", &v));
  EXPECT_FALSE(NcuReport::parse_number("", &v));
}

}  // namespace
}  // namespace kiln::worker
