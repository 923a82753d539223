// simulate through a server built the way `kiln mcp` builds it: the fp16_gemm starter passes;
// wrong, out-of-bounds, runaway and unbuildable kernels are told apart; bad arguments are
// refused before any work; progress is reported and cancellation stops the subprocess.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "kiln/mcp/server.h"
#include "kiln/tools/toolbox.h"
#include "support/temp_dir.h"
#include "toolbox_fixture.h"

namespace kiln::tools {
namespace {

using json = nlohmann::json;

// C = A * B^T for fp16, one thread per output; KILN_BUG selects a mistake (1, 2) or printf
// debugging output from in-bounds threads (3: thread (0,0) of each block; 4: every thread;
// 5: every thread, a 3-byte UTF-8 character and no newline).
constexpr const char* kGemm = R"(#include "kiln/abi.h"
#include <cuda_fp16.h>
#include <cstdio>
__global__ void gemm(const __half* a, const __half* b, __half* c, long M, long N, long K) {
  long row = blockIdx.y * (long)blockDim.y + threadIdx.y;
  long col = blockIdx.x * (long)blockDim.x + threadIdx.x;
#if KILN_BUG == 2
  if (row >= M + 1 || col >= N) return;  // one row too many: out of bounds
#else
  if (row >= M || col >= N) return;
#endif
#if KILN_BUG == 3
  if (threadIdx.x == 0 && threadIdx.y == 0) printf("block (%d,%d)\n", blockIdx.x, blockIdx.y);
#elif KILN_BUG == 4
  printf("thread (%d,%d) block (%d,%d)\n", threadIdx.x, threadIdx.y, blockIdx.x, blockIdx.y);
#elif KILN_BUG == 5
  printf("\xe2\x82\xac");  // one euro sign per thread, no newline
#endif
  float sum = 0.0f;
#if KILN_BUG == 1
  for (long k = 0; k < K - 1; ++k)  // drops the last k: wrong answer
#else
  for (long k = 0; k < K; ++k)
#endif
    sum += __half2float(a[row * K + k]) * __half2float(b[col * K + k]);
  c[row * N + col] = __float2half(sum);
}
extern "C" int kiln_launch(const kiln_tensor* t, int, const kiln_scalar*, int, cudaStream_t s) {
  long M = t[0].shape[0], K = t[0].shape[1], N = t[1].shape[0];
  dim3 block(16, 16), grid((N + 15) / 16, (M + 15) / 16 + 1);
  gemm<<<grid, block, 0, s>>>(static_cast<const __half*>(t[0].data),
                              static_cast<const __half*>(t[1].data),
                              static_cast<__half*>(t[2].data), M, N, K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
)";

constexpr const char* kSpin = R"(#include "kiln/abi.h"
__global__ void spin() {
  volatile int x = 0;
  while (x == 0) {
  }
}
extern "C" int kiln_launch(const kiln_tensor*, int, const kiln_scalar*, int, cudaStream_t s) {
  spin<<<1, 32, 0, s>>>();
  return 0;
}
)";

std::string index_text(const json& index) {
  return "[" + std::to_string(index[0].get<int>()) + ", " + std::to_string(index[1].get<int>()) +
         "]";
}

std::string with_bug(int bug) { return "#define KILN_BUG " + std::to_string(bug) + "\n" + kGemm; }

class SimulateToolTest : public NvccToolboxTest {
 protected:
  void configure(ToolboxConfig& config) override { config.sim_runner = KILN_SIM_RUN; }
  mcp::ToolResult call(const json& arguments) { return call_tool("simulate", arguments); }
};

TEST_F(SimulateToolTest, Fp16GemmStarterPassesEveryWorkloadWithCountsAndProgress) {
  std::mutex mutex;
  std::vector<json> notifications;
  mcp::CallContext context(
      [&](json notification) {
        std::lock_guard lock(mutex);
        notifications.push_back(std::move(notification));
      },
      json("token"), std::make_shared<std::atomic<bool>>(false),
      std::make_shared<std::atomic<mcp::LogLevel>>(mcp::LogLevel::kInfo));
  const std::string starter = std::string(KILN_TASKS_DIR) + "/fp16_gemm/starter.cu";
  auto result = server_.tools().run("simulate", {{"path", starter}}, context);
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["ok"], true);
  EXPECT_EQ(result.structured["file"], "tasks/fp16_gemm/starter.cu");
  EXPECT_EQ(result.structured["passed"], 4);
  EXPECT_EQ(result.structured["total"], 4);
  for (const json& workload : result.structured["workloads"]) {
    EXPECT_EQ(workload["passed"], true) << workload.dump(2);
    EXPECT_EQ(workload["mismatches"], 0);
    const json& stats = workload["stats"];
    EXPECT_GT(stats["warp_instructions"].get<uint64_t>(), 0u);
    EXPECT_GT(stats["lane_instructions"].get<uint64_t>(),
              stats["warp_instructions"].get<uint64_t>());
    EXPECT_GT(stats["by_class"]["load"].get<uint64_t>(), 0u);
    EXPECT_GT(stats["bytes_by_space"]["global"].get<uint64_t>(), 0u);
    EXPECT_TRUE(stats.contains("shared_bank_conflicts"));
    EXPECT_TRUE(stats.contains("divergent_branches"));
  }
  EXPECT_NE(result.text.find("4/4 sim workloads pass"), std::string::npos) << result.text;
  EXPECT_NE(result.text.find("not times"), std::string::npos);
  EXPECT_NE(result.text.find("PASS 33x17x40"), std::string::npos);
  EXPECT_LT(result.text.size(), 10000u);
  // One notification before the build, one after it, one per workload.
  std::lock_guard lock(mutex);
  ASSERT_EQ(notifications.size(), 6u);
  EXPECT_EQ(notifications.back()["params"]["progress"], 5);
  EXPECT_EQ(notifications.back()["params"]["total"], 5);
}

// The grouped FP8 GEMM's inputs include a group_index (fixed by the dims) and its output rows
// with I = -1 are outside the contract: the starter, which writes them as zeros, passes, and so
// would one that left them holding the poison.
TEST_F(SimulateToolTest, GroupedGemmFp8StarterPassesEverySimWorkload) {
  const std::string starter = std::string(KILN_TASKS_DIR) + "/grouped_gemm_fp8/starter.cu";
  auto result = call({{"path", starter}, {"task", "grouped_gemm_fp8"}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["ok"], true);
  EXPECT_EQ(result.structured["passed"], 3);
  EXPECT_EQ(result.structured["total"], 3);
  for (const json& workload : result.structured["workloads"]) {
    EXPECT_EQ(workload["passed"], true) << workload.dump(2);
    EXPECT_EQ(workload["mismatches"], 0);
  }
}

TEST_F(SimulateToolTest, WrongKernelFailsWithMismatchesAndTheFirstValues) {
  auto result = call({{"source", with_bug(1)}, {"workloads", {"64x64x64", "33x17x40"}}});
  ASSERT_TRUE(result.is_error);
  EXPECT_EQ(result.structured["ok"], false);
  EXPECT_EQ(result.structured["passed"], 0);
  EXPECT_EQ(result.structured["total"], 2);
  const json& workload = result.structured["workloads"][0];
  EXPECT_EQ(workload["status"], "wrong_answer");
  EXPECT_GT(workload["mismatches"].get<int64_t>(), 0);
  EXPECT_GT(workload["max_abs_error"].get<double>(), 0.0);
  ASSERT_FALSE(workload["first_mismatches"].empty());
  EXPECT_LE(workload["first_mismatches"].size(), 5u);
  const json& first = workload["first_mismatches"][0];
  EXPECT_EQ(first["index"].size(), 2u);  // [row, col] of C
  EXPECT_GT(std::abs(first["expected"].get<double>() - first["actual"].get<double>()), 0.01);
  EXPECT_EQ(workload["nan"], 0);
  EXPECT_NE(result.text.find("FAIL 64x64x64 (wrong_answer)"), std::string::npos) << result.text;
  EXPECT_NE(result.text.find("first mismatches: " + index_text(first["index"]) + " expected"),
            std::string::npos);
  EXPECT_NE(result.text.find("next:"), std::string::npos);
}

TEST_F(SimulateToolTest, OutOfBoundsKernelReportsAFaultWithItsSourceLine) {
  testing::write_text(run_dir_ / "worktree/candidates/oob/kernel.cu", with_bug(2));
  auto result = call({{"path", "worktree/candidates/oob/kernel.cu"}, {"workloads", {"33x17x40"}}});
  ASSERT_TRUE(result.is_error);
  const json& workload = result.structured["workloads"][0];
  EXPECT_EQ(workload["status"], "fault") << workload.dump(2);
  ASSERT_FALSE(workload["faults"].empty());
  const json& fault = workload["faults"][0];
  EXPECT_EQ(fault["kind"], "out_of_bounds");
  // The source line of the store, named as the agent named the file.
  EXPECT_EQ(fault["source"].get<std::string>().rfind("worktree/candidates/oob/kernel.cu:", 0), 0u)
      << fault.dump(2);
  EXPECT_GT(fault["ptx_line"].get<int>(), 0);
  EXPECT_EQ(fault["block"].size(), 3u);
  EXPECT_EQ(fault["thread"].size(), 3u);
  EXPECT_EQ(fault["address"].get<std::string>().rfind("0x", 0), 0u);
  EXPECT_NE(result.text.find("fault out_of_bounds at worktree/candidates/oob/kernel.cu:"),
            std::string::npos)
      << result.text;
  EXPECT_EQ(result.text.find(run_dir_.path().string()), std::string::npos) << result.text;
}

TEST_F(SimulateToolTest, PrintfOutputComesBackPerWorkload) {
  auto result = call({{"source", with_bug(3)}, {"shapes", {"M=20,N=24,K=8"}}});
  ASSERT_FALSE(result.is_error) << result.text;
  const json& workload = result.structured["workloads"][0];
  // Grid (2, 3) of 16x16 blocks over a 20x24 C: thread (0,0) is in bounds in blocks with y < 2.
  std::string expect;
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 2; ++x)
      expect += "block (" + std::to_string(x) + "," + std::to_string(y) + ")\n";
  EXPECT_EQ(workload["printf_output"], expect);
  EXPECT_EQ(workload["printf_bytes"], expect.size());
  EXPECT_FALSE(workload.contains("printf_note"));
  EXPECT_NE(
      result.text.find("printf (" + std::to_string(expect.size()) + " bytes):\n  | block (0,0)\n"),
      std::string::npos)
      << result.text;
}

TEST_F(SimulateToolTest, LongPrintfOutputIsCutWithANote) {
  auto result = call({{"source", with_bug(4)}, {"workloads", {"64x64x64"}}});
  ASSERT_FALSE(result.is_error) << result.text;
  const json& workload = result.structured["workloads"][0];
  // Every in-bounds thread prints: the blocks of rows 0-3 of the (4, 5) grid of 16x16 blocks,
  // 106 KB in all, past kiln-sim-run's 64 KiB per workload and the tool's 4000 bytes.
  uint64_t total = 0;
  for (int by = 0; by < 4; ++by)
    for (int bx = 0; bx < 4; ++bx)
      for (int ty = 0; ty < 16; ++ty)
        for (int tx = 0; tx < 16; ++tx)
          total += ("thread (" + std::to_string(tx) + "," + std::to_string(ty) + ") block (" +
                    std::to_string(bx) + "," + std::to_string(by) + ")\n")
                       .size();
  EXPECT_EQ(workload["printf_bytes"], total);
  const std::string shown = workload["printf_output"];
  EXPECT_LE(shown.size(), 4000u);
  EXPECT_EQ(shown.rfind("thread (0,0) block (0,0)\nthread (1,0) block (0,0)\n", 0), 0u);
  EXPECT_EQ(shown.back(), '\n');  // cut after a whole line
  EXPECT_NE(workload["printf_note"].get<std::string>().find("fewer threads"), std::string::npos);
  EXPECT_LT(result.text.size(), 10000u);
  EXPECT_NE(result.text.find("printf (" + std::to_string(total) + " bytes, first "),
            std::string::npos)
      << result.text;
}

TEST_F(SimulateToolTest, OneLongLineOfPrintfIsCutBetweenCharacters) {
  auto result = call({{"source", with_bug(5)}, {"shapes", {"M=64,N=64,K=8"}}});
  ASSERT_FALSE(result.is_error) << result.text;
  const json& workload = result.structured["workloads"][0];
  EXPECT_EQ(workload["printf_bytes"], 64 * 64 * 3);
  const std::string shown = workload["printf_output"];
  EXPECT_EQ(shown.size(), 3999u);  // 1333 whole characters of 3 bytes in 4000
  EXPECT_EQ(shown.substr(shown.size() - 3), "\xe2\x82\xac");
}

TEST_F(SimulateToolTest, ABuildErrorPointsAtCompile) {
  auto result = call({{"source", "__global__ void k() { not_declared = 1; }\n"}});
  ASSERT_TRUE(result.is_error);
  EXPECT_EQ(result.structured["stage"], "build_candidate");
  EXPECT_NE(result.text.find("run compile"), std::string::npos) << result.text;
  EXPECT_NE(result.text.find("kernel.cu"), std::string::npos);
}

TEST_F(SimulateToolTest, APathOutsideTheRootsIsRefused) {
  auto result = call({{"path", "/etc/passwd"}});
  ASSERT_TRUE(result.is_error);
  EXPECT_NE(result.text.find("outside"), std::string::npos) << result.text;
  auto escape = call({{"path", "../../etc/passwd"}});
  ASSERT_TRUE(escape.is_error);
  EXPECT_NE(escape.text.find("outside"), std::string::npos) << escape.text;
}

TEST_F(SimulateToolTest, AnUnknownWorkloadIsRefusedWithTheValidNames) {
  auto result = call({{"source", with_bug(0)}, {"workloads", {"4096x4096x4096"}}});
  ASSERT_TRUE(result.is_error);
  EXPECT_NE(result.text.find("no sim_workload '4096x4096x4096'"), std::string::npos) << result.text;
  EXPECT_NE(result.text.find("64x64x64, 128x96x80, 33x17x40, 16x128x256"), std::string::npos);
}

TEST_F(SimulateToolTest, ShapesRunAsWorkloadsNamedByTheirValues) {
  auto result = call({{"source", with_bug(0)}, {"shapes", {"M=20,N=24,K=8"}}});
  ASSERT_FALSE(result.is_error) << result.text;
  EXPECT_EQ(result.structured["total"], 1);
  EXPECT_EQ(result.structured["workloads"][0]["name"], "20x24x8");
  EXPECT_EQ(result.structured["workloads"][0]["passed"], true);
  EXPECT_NE(result.text.find("PASS 20x24x8"), std::string::npos) << result.text;
}

TEST_F(SimulateToolTest, BadShapesAreRefusedBeforeAnyWork) {
  auto missing = call({{"source", with_bug(0)}, {"shapes", {"M=64,N=64"}}});
  ASSERT_TRUE(missing.is_error);
  EXPECT_NE(missing.text.find("K is missing"), std::string::npos) << missing.text;
  EXPECT_NE(missing.text.find("has dims M, N, K"), std::string::npos) << missing.text;
  auto large = call({{"source", with_bug(0)}, {"shapes", {"M=4096,N=4096,K=4096"}}});
  ASSERT_TRUE(large.is_error);
  EXPECT_NE(large.text.find("benchmark"), std::string::npos) << large.text;
  EXPECT_TRUE(call({{"source", with_bug(0)}, {"shapes", {{{"M", 1}}}}}).is_error);
}

TEST_F(SimulateToolTest, BadArgumentsAreRefusedBySchema) {
  EXPECT_TRUE(call({{"source", kSpin}, {"seed", -1}}).is_error);
  EXPECT_TRUE(call({{"source", kSpin}, {"time_limit_s", 0}}).is_error);
  EXPECT_TRUE(call({{"source", kSpin}, {"path", "a.cu"}}).is_error);
  EXPECT_TRUE(call({{"source", kSpin}, {"task", "no_such_task"}}).is_error);
}

TEST_F(SimulateToolTest, TheTimeLimitStopsARunawayKernelWithAClearMessage) {
  const auto start = std::chrono::steady_clock::now();
  auto result = call({{"source", kSpin}, {"workloads", {"64x64x64"}}, {"time_limit_s", 1}});
  ASSERT_TRUE(result.is_error);
  const json& workload = result.structured["workloads"][0];
  ASSERT_FALSE(workload["faults"].empty()) << workload.dump(2);
  EXPECT_EQ(workload["faults"][0]["kind"], "time_limit");
  EXPECT_EQ(workload["faults"][0]["source"].get<std::string>().rfind("kernel.cu:", 0), 0u);
  EXPECT_NE(result.text.find("loop"), std::string::npos) << result.text;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

TEST_F(SimulateToolTest, TheInstructionBudgetStopsARunawayKernel) {
  auto result =
      call({{"source", kSpin}, {"workloads", {"64x64x64"}}, {"instruction_budget", 100000}});
  ASSERT_TRUE(result.is_error);
  const json& workload = result.structured["workloads"][0];
  ASSERT_FALSE(workload["faults"].empty()) << workload.dump(2);
  EXPECT_EQ(workload["faults"][0]["kind"], "budget");
}

TEST_F(SimulateToolTest, CancellationKillsTheSimulation) {
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  // Cancel once the build is done and the runaway kernel is running.
  mcp::CallContext context(
      [&](const json& notification) {
        if (notification["params"].value("progress", 0.0) >= 1) *cancelled = true;
      },
      json(7), cancelled, std::make_shared<std::atomic<mcp::LogLevel>>(mcp::LogLevel::kInfo));
  const auto start = std::chrono::steady_clock::now();
  auto result = server_.tools().run(
      "simulate", {{"source", kSpin}, {"workloads", {"64x64x64"}}, {"time_limit_s", 300}}, context);
  ASSERT_TRUE(result.is_error);
  EXPECT_EQ(result.structured["stage"], "cancelled");
  EXPECT_EQ(result.text.rfind("cancelled", 0), 0u) << result.text;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

}  // namespace
}  // namespace kiln::tools
