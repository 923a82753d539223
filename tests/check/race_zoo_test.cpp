// Zoo kernels (kb/zoo, compiled to PTX for the simulator tests in tests/sim) are free of races
// under the default racecheck schedules: no false alarm on real GEMMs (plain, mma.sync with
// ldmatrix, a cp.async multistage pipeline, wgmma fed by TMA), Hopper flash attention (wgmma
// and TMA) and a warp-shuffle reduction with atomics.
#include "zoo_under_checker.h"

namespace kiln::check {
namespace {

using ZooRun = ZooLaunch<RaceDetector>;

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

TEST(RaceZoo, GemmNaiveIsClean) {
  gemm("gemm_naive", {"gemm_tn_naive_kernel"}, 16, 64, 40, {2, 2}, {32, 8}, false);
}

TEST(RaceZoo, GemmMmaSyncLdmatrixIsClean) {
  gemm("gemm_mma_sync_ldmatrix", {"gemm_tn_mma_kernel"}, 128, 128, 64, {1, 1}, {256}, true);
}

TEST(RaceZoo, GemmCpAsyncMultistageIsClean) {
  gemm("gemm_cp_async_multistage", {"gemm_tn_multistage_kernel", "6__half"}, 128, 128, 256, {1, 1},
       {256}, true, 4 * 256 * 40 * 2);
}

// A 2-d f16 tensor map with 64-element rows in 128-byte swizzle, as the zoo kernel expects.
std::vector<uint8_t> f16_map(uint64_t address, uint64_t rows, uint64_t cols, uint32_t box_rows) {
  sim::TensorMapDesc d;
  d.rank = 2;
  d.data_type = 6;  // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
  d.element_bytes = 2;
  d.global_address = address;
  d.global_dim[0] = cols;
  d.global_dim[1] = rows;
  d.global_stride_bytes[0] = 2;
  d.global_stride_bytes[1] = cols * 2;
  d.box_dim[0] = 64;
  d.box_dim[1] = box_rows;
  d.element_strides[0] = d.element_strides[1] = 1;
  d.swizzle = 3;  // CU_TENSOR_MAP_SWIZZLE_128B
  std::vector<uint8_t> bytes(sim::kTensorMapBytes);
  sim::encode_tensor_map(d, bytes.data());
  return bytes;
}

// Six K tiles through three stages: each stage is refilled once its wgmma groups retired.
TEST(RaceZoo, GemmWgmmaTmaIsClean) {
  ZooRun z;
  const uint32_t m = 128, n = 256, k = 384;
  uint64_t a = z.buffer(m * k * 2, 0x3c), b = z.buffer(n * k * 2, 0x3c), c = z.buffer(m * n * 2, 0);
  std::vector<uint8_t> map_a = f16_map(a, m, k, 128), map_b = f16_map(b, n, k, 128);
  if (!z.run("gemm_wgmma_tma", {"gemm_wgmma_tma_kernel"}, {n / 128, m / 128}, {256},
             {c, m, n, k, n, 1}, 1024 + 3 * 32768 + 2 * 3 * 8, {map_a.data(), map_b.data()})) {
    GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  }
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
}

// Flash attention with wgmma (S = Q K^T, then O = P V with P from registers) fed by TMA loads:
// three K/V blocks through two stages, each released to the loader after the wgmma groups that
// read it retire.
TEST(RaceZoo, AttentionHopperWgmmaIsClean) {
  ZooRun z;
  const uint32_t seq = 384, d = 64;
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

TEST(RaceZoo, ReduceWarpShuffleIsClean) {
  ZooRun z;
  const uint32_t n = 10003;
  uint64_t x = z.buffer(n * 4, 0), y = z.buffer(4, 0);
  if (!z.run("reduce_warp_shuffle", {"reduce_sum_atomic_kernel"}, {4}, {256}, {x, n, 1, y})) {
    GTEST_SKIP() << "no zoo PTX (no CUDA toolkit)";
  }
  EXPECT_TRUE(z.detector.findings().empty()) << z.findings();
}

}  // namespace
}  // namespace kiln::check
