// peak_table.h: peak rates from the built-in table or a kb/hw spec, and % of peak.
#include "kiln/worker/peak_table.h"

#include <gtest/gtest.h>

#include "worker_test_support.h"

namespace kiln::worker {
namespace {

TEST(PeakTable, KnowsTheH200ByItsDeviceName) {
  for (const char* name : {"NVIDIA H200", "H200 SXM", "nvidia-h200"}) {
    auto rates = PeakTable::built_in(name);
    ASSERT_TRUE(rates.has_value()) << name;
    EXPECT_EQ(rates->hbm_gbps, 4800);
    EXPECT_NEAR(rates->tflops_for("f16"), 989.4, 0.1);
    EXPECT_NE(rates->source.find("datasheet"), std::string::npos);
  }
  EXPECT_FALSE(PeakTable::built_in("NVIDIA GeForce RTX 4090").has_value());
}

TEST(PeakTable, PrefersAKbHwSpec) {
  testing::TempDir dir;
  testing::write_text(dir.path() / "h200_sxm.json", R"({
    "id": "h200_sxm", "name": "NVIDIA H200 SXM", "aliases": ["H200", "NVIDIA H200"],
    "specs": {"hbm_bandwidth_gbps": {"value": 4814, "source": "measured"}},
    "tensor_dense_tflops": {"fp16": {"value": 990, "source": "whitepaper"}, "fp8": {"value": 1980, "source": "w"}}})");
  testing::write_text(dir.path() / "broken.json", "{not json");
  auto rates = PeakTable::lookup("NVIDIA H200", dir.path());
  ASSERT_TRUE(rates.has_value());
  EXPECT_EQ(rates->hbm_gbps, 4814);
  EXPECT_EQ(rates->tflops_for("f16"), 990);
  EXPECT_EQ(rates->tflops_for("e4m3"), 1980);
  EXPECT_NE(rates->source.find("h200_sxm.json"), std::string::npos);
  // Unknown GPU in the folder: the built-in table answers for the H200 only.
  EXPECT_FALSE(PeakTable::lookup("NVIDIA A100", dir.path()).has_value());
}

TEST(PeakTable, ThroughputAndShareOfPeak) {
  const auto rates = PeakTable::built_in("H200");
  // 2*4096^3 flops in 200 us = 687 TFLOP/s = 69% of 989.
  const Throughput t =
      PeakTable::throughput(2.0 * 4096 * 4096 * 4096, 3 * 2.0 * 4096 * 4096, 200e-6, "f16", rates);
  EXPECT_NEAR(t.tflops, 687.2, 0.1);
  EXPECT_NEAR(t.pct_of_peak_flops, 69.46, 0.05);
  EXPECT_EQ(t.pct_of_peak, t.pct_of_peak_flops);  // the binding roofline
  // A memory-bound kernel: 1 GB in 250 us = 4000 GB/s = 83% of 4800.
  const Throughput m = PeakTable::throughput(1e8, 1e9, 250e-6, "bf16", rates);
  EXPECT_NEAR(m.gbps, 4000, 1e-6);
  EXPECT_NEAR(m.pct_of_peak, 83.33, 0.01);
  EXPECT_EQ(PeakTable::throughput(1, 1, 0, "f16", rates).tflops, 0);
}

}  // namespace
}  // namespace kiln::worker
