// occupancy.h: blocks per SM and the limiting resource, against hand-computed cases on the
// H200 (sm_90: 64K registers in 4 sub-partitions, 228 KB shared memory, 64 warps, 32 blocks).
#include "kiln/compiler/occupancy.h"

#include <gtest/gtest.h>

#include <fstream>

namespace kiln::compiler {
namespace {

SmLimits h200() { return *sm_limits_for_arch("sm_90a"); }

KernelUsage usage(int block_size, int registers, int64_t static_smem = 0,
                  int64_t dynamic_smem = 0) {
  KernelUsage u;
  u.block_size = block_size;
  u.registers = registers;
  u.static_smem_bytes = static_smem;
  u.dynamic_smem_bytes = dynamic_smem;
  u.barriers = 1;
  return u;
}

TEST(Occupancy, RegisterLimited) {
  // 128 regs x 32 lanes = 4096 per warp; 16384 per sub-partition hold 4 warps: 16 warps per SM,
  // 2 blocks of 8 warps.
  const Occupancy o = compute_occupancy(usage(256, 128), h200());
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.active_warps, 16);
  EXPECT_EQ(o.max_warps, 64);
  EXPECT_DOUBLE_EQ(o.percent, 25.0);
  EXPECT_EQ(o.limiter, "registers");
  EXPECT_EQ(o.registers_per_block, 32768);
}

TEST(Occupancy, RegistersAreRoundedPerWarp) {
  // 33 regs x 32 = 1056, rounded to 1280 per warp: 12 warps per sub-partition, 48 per SM, 12
  // blocks of 4 warps (without rounding it would be 15).
  const Occupancy o = compute_occupancy(usage(128, 33), h200());
  EXPECT_EQ(o.by_registers, 12);
  EXPECT_EQ(o.blocks_per_sm, 12);
  EXPECT_EQ(o.active_warps, 48);
  EXPECT_DOUBLE_EQ(o.percent, 75.0);
  EXPECT_EQ(o.limiter, "registers");
}

TEST(Occupancy, SharedMemoryLimitedWithTheReservePerBlock) {
  // 48 KB + 1 KB reserve = 50176 bytes per block; 233472 / 50176 = 4 blocks.
  const Occupancy o = compute_occupancy(usage(128, 32, 49152), h200());
  EXPECT_EQ(o.smem_per_block_bytes, 50176);
  EXPECT_EQ(o.blocks_per_sm, 4);
  EXPECT_EQ(o.active_warps, 16);
  EXPECT_EQ(o.limiter, "shared_memory");
}

TEST(Occupancy, SharedMemoryIsRoundedToTheAllocationUnit) {
  // 1000 + 1024 = 2024, rounded up to 2048 bytes.
  EXPECT_EQ(compute_occupancy(usage(128, 32, 1000), h200()).smem_per_block_bytes, 2048);
}

TEST(Occupancy, DynamicSharedMemoryCountsAndTheOptInLimitHolds) {
  // 100 KB dynamic: 103424 bytes a block, 2 blocks.
  EXPECT_EQ(compute_occupancy(usage(128, 32, 0, 102400), h200()).blocks_per_sm, 2);
  // 227 KB is the most one block may have with the opt-in.
  EXPECT_EQ(compute_occupancy(usage(128, 32, 0, 232448), h200()).blocks_per_sm, 1);
  const Occupancy over = compute_occupancy(usage(128, 32, 0, 232449), h200());
  EXPECT_EQ(over.blocks_per_sm, 0);
  EXPECT_EQ(over.limiter, "shared_memory");
  EXPECT_NE(over.problem.find("shared memory"), std::string::npos);
}

TEST(Occupancy, ThreadLimited) {
  // 1024 threads = 32 warps: 2 blocks fill the 64 warp slots; registers would allow 4.
  const Occupancy o = compute_occupancy(usage(1024, 16), h200());
  EXPECT_EQ(o.by_registers, 4);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(o.percent, 100.0);
  EXPECT_EQ(o.limiter, "warps");
}

TEST(Occupancy, BlockCountLimitedForTinyBlocks) {
  // One warp per block: the 32-block cap leaves half the warp slots empty.
  const Occupancy o = compute_occupancy(usage(32, 16), h200());
  EXPECT_EQ(o.blocks_per_sm, 32);
  EXPECT_DOUBLE_EQ(o.percent, 50.0);
  EXPECT_EQ(o.limiter, "blocks");
}

TEST(Occupancy, PartialWarpsCountAsWholeWarps) {
  // 48 threads use 2 warp slots.
  const Occupancy o = compute_occupancy(usage(48, 16), h200());
  EXPECT_EQ(o.active_warps, o.blocks_per_sm * 2);
}

TEST(Occupancy, BlockThatCannotLaunchSaysWhy) {
  const Occupancy registers = compute_occupancy(usage(1024, 255), h200());
  EXPECT_EQ(registers.blocks_per_sm, 0);
  EXPECT_EQ(registers.limiter, "registers");
  EXPECT_NE(registers.problem.find("maxrregcount"), std::string::npos);
  const Occupancy threads = compute_occupancy(usage(2048, 16), h200());
  EXPECT_EQ(threads.blocks_per_sm, 0);
  EXPECT_NE(threads.problem.find("1024"), std::string::npos);
}

TEST(Occupancy, ArchTablesDifferWhereTheHardwareDoes) {
  auto ampere = sm_limits_for_arch("sm_80");
  auto ada = sm_limits_for_arch("sm_89");
  ASSERT_TRUE(ampere.ok());
  ASSERT_TRUE(ada.ok());
  EXPECT_EQ(ampere->smem_per_sm_bytes, 167936);
  EXPECT_EQ(ada->max_threads_per_sm, 1536);
  EXPECT_EQ(ada->max_blocks_per_sm, 24);
  auto unknown = sm_limits_for_arch("sm_75");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("sm_90"), std::string::npos);
}

// data/h200_occupancy.jsonl: what cudaOccupancyMaxActiveBlocksPerMultiprocessor said on the
// H200 for kernels from 11 to 247 registers, 0 to 48 KB static shared memory, blocks of 32 to
// 1024 threads and 0 to 200000 bytes of dynamic shared memory (data/h200_occupancy.cu).
TEST(Occupancy, MatchesTheCudaRuntimeOnTheH200) {
  std::ifstream in(std::string(KILN_TEST_COMPILER_DATA) + "/h200_occupancy.jsonl");
  ASSERT_TRUE(in.good());
  std::string line;
  int cases = 0;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    KernelUsage u;
    u.block_size = j["block"];
    u.registers = j["regs"];
    u.static_smem_bytes = j["static_smem"];
    u.dynamic_smem_bytes = j["dyn"];
    u.barriers = j["static_smem"].get<int>() > 0 || j["kernel"] == "dyn" ? 1 : 0;
    EXPECT_EQ(compute_occupancy(u, h200()).blocks_per_sm, j["blocks"].get<int>()) << line;
    ++cases;
  }
  EXPECT_EQ(cases, 594);
}

TEST(Occupancy, JsonNamesTheLimiterAndEachLimit) {
  const nlohmann::json j = compute_occupancy(usage(256, 128), h200()).to_json();
  EXPECT_EQ(j["limiter"], "registers");
  EXPECT_EQ(j["blocks_allowed_by"]["warps"], 8);
  EXPECT_FALSE(j.contains("problem"));
}

}  // namespace
}  // namespace kiln::compiler
