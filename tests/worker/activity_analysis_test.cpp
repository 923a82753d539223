// activity_analysis.h: sample spans and the hidden_stream_work gate from CUPTI records.
#include "kiln/worker/activity_analysis.h"

#include <gtest/gtest.h>

namespace kiln::worker {
namespace {

using Kind = ActivityRecord::Kind;

ActivityRecord gpu(Kind kind, uint64_t start, uint64_t end, uint32_t stream,
                   const std::string& name = "k") {
  ActivityRecord r;
  r.kind = kind;
  r.start = start;
  r.end = end;
  r.stream_id = stream;
  r.name = name;
  return r;
}

ActivityRecord api(uint64_t start, uint64_t end, uint32_t thread, const std::string& name) {
  ActivityRecord r;
  r.kind = Kind::kRuntimeApi;
  r.start = start;
  r.end = end;
  r.thread_id = thread;
  r.name = name;
  return r;
}

ActivityContext context() {
  ActivityContext c;
  c.launch_stream = 13;
  c.harness_streams = {14};
  c.harness_threads = {1};
  return c;
}

// A window: open 100, kiln_launch runs 110..120, closed at 1000.
CallWindow window() { return CallWindow{"candidate", 100, 110, 120, 1000}; }
CallWindow gated_window() {
  CallWindow w = window();
  w.gated = true;
  return w;
}
constexpr const char* kHold = "_ZN4kiln6worker12_GLOBAL__N_117kiln_harness_holdEPVKiPiy";

TEST(ActivityAnalysis, SpanCoversEveryKernelOnAnyStream) {
  const std::vector<ActivityRecord> records = {gpu(Kind::kKernel, 130, 400, 13, "a"),
                                               gpu(Kind::kMemset, 410, 420, 13, "m"),
                                               gpu(Kind::kKernel, 420, 900, 13, "b")};
  const WindowFindings f = ActivityAnalysis::analyze(records, window(), context());
  EXPECT_EQ(f.span_ns, 770u);
  EXPECT_EQ(f.kernels, 2);
  EXPECT_EQ(f.gpu_records, 3);
  EXPECT_TRUE(f.violations.empty());
}

TEST(ActivityAnalysis, HarnessWorkAndWorkOutsideTheWindowAreNotCharged) {
  const std::vector<ActivityRecord> records = {gpu(Kind::kMemset, 10, 90, 14, "flush"),
                                               gpu(Kind::kKernel, 1100, 1200, 14, "checksum"),
                                               gpu(Kind::kKernel, 200, 300, 13)};
  const WindowFindings f = ActivityAnalysis::analyze(records, window(), context());
  EXPECT_EQ(f.span_ns, 100u);
  EXPECT_EQ(f.gpu_records, 1);
}

TEST(ActivityAnalysis, TheLaunchGatesHoldOnTheLaunchStreamIsNotCharged) {
  // The hold spins on the launch stream from before kiln_launch until after it returns; the
  // candidate's kernels run after it. Only they count.
  const std::vector<ActivityRecord> records = {gpu(Kind::kKernel, 105, 125, 13, kHold),
                                               gpu(Kind::kKernel, 126, 400, 13, "splitk_gemm"),
                                               gpu(Kind::kKernel, 402, 450, 13, "splitk_reduce")};
  const WindowFindings f = ActivityAnalysis::analyze(records, gated_window(), context());
  EXPECT_EQ(f.span_ns, 324u);
  EXPECT_EQ(f.kernels, 2);
  EXPECT_EQ(f.kernel_names.count("splitk_gemm"), 1u);
}

TEST(ActivityAnalysis, ACandidateKernelNamedLikeTheHarnessIsCharged) {
  // Exclusion goes by place (the first kernel on the launch stream of a gated window), never
  // by a name the candidate can choose: here the real hold comes first, the impostor after.
  const std::vector<ActivityRecord> records = {
      gpu(Kind::kKernel, 105, 125, 13, kHold), gpu(Kind::kKernel, 126, 400, 13, kHold),
      gpu(Kind::kKernel, 402, 450, 21, "kiln_harness_checksum")};
  const WindowFindings f = ActivityAnalysis::analyze(records, gated_window(), context());
  EXPECT_EQ(f.span_ns, 324u);
  EXPECT_EQ(f.kernels, 2);
  // Without the gate there is no hold, so a kernel with its name is the candidate's.
  const WindowFindings ungated = ActivityAnalysis::analyze(records, window(), context());
  EXPECT_EQ(ungated.kernels, 3);
  EXPECT_EQ(ungated.span_ns, 345u);
}

TEST(ActivityAnalysis, ALateKernelOnAnotherStreamIsAViolationAndCharged) {
  const std::vector<ActivityRecord> records = {gpu(Kind::kKernel, 150, 950, 21, "gemm")};
  const WindowFindings f = ActivityAnalysis::analyze(records, window(), context());
  ASSERT_EQ(f.violations.size(), 1u);
  EXPECT_NE(f.violations[0].find("stream 21"), std::string::npos);
  EXPECT_EQ(f.span_ns, 800u);
}

TEST(ActivityAnalysis, OffStreamWorkFinishedBeforeReturnIsOnlyNoted) {
  // A synchronous cudaMemset on the legacy stream inside kiln_launch.
  const std::vector<ActivityRecord> records = {gpu(Kind::kMemset, 111, 115, 7, "memset"),
                                               gpu(Kind::kKernel, 130, 400, 13)};
  const WindowFindings f = ActivityAnalysis::analyze(records, window(), context());
  EXPECT_TRUE(f.violations.empty());
  ASSERT_EQ(f.notes.size(), 1u);
  EXPECT_EQ(f.span_ns, 289u);
}

TEST(ActivityAnalysis, HostSynchronizationInsideTheCallIsListed) {
  const std::vector<ActivityRecord> records = {api(112, 114, 1, "cudaStreamSynchronize_v3020"),
                                               api(115, 118, 1, "cudaStreamSynchronize_v3020"),
                                               api(500, 990, 1, "cudaDeviceSynchronize_v3020")};
  const WindowFindings f = ActivityAnalysis::analyze(records, window(), context());
  // The harness's own synchronize after the call is not listed; the caller fails or notes these.
  ASSERT_EQ(f.host_syncs.size(), 1u);
  EXPECT_EQ(f.host_syncs[0], "cudaStreamSynchronize 2 times");
  EXPECT_TRUE(f.notes.empty());
}

TEST(ActivityAnalysis, CallsFromAnotherThreadAreFound) {
  const std::vector<ActivityRecord> records = {api(112, 118, 1, "cudaLaunchKernel"),
                                               api(300, 310, 77, "cudaLaunchKernel"),
                                               api(320, 330, 77, "cudaLaunchKernel")};
  const auto calls = ActivityAnalysis::foreign_thread_calls(records, context());
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_NE(calls[0].find("x2"), std::string::npos);
}

TEST(ActivityAnalysis, StrayWorkIsPinnedOnTheLastCall) {
  const std::vector<CallWindow> windows = {{"candidate", 100, 110, 120, 1000},
                                           {"baseline", 2000, 2010, 2020, 3000}};
  const std::vector<ActivityRecord> records = {gpu(Kind::kKernel, 1500, 1600, 13, "late"),
                                               gpu(Kind::kKernel, 2100, 2200, 13, "inside"),
                                               gpu(Kind::kKernel, 1200, 1300, 14, "harness")};
  std::vector<std::string> owners;
  const auto stray = ActivityAnalysis::stray_work(records, windows, context(), &owners);
  ASSERT_EQ(stray.size(), 1u);
  EXPECT_EQ(owners[0], "candidate");
  EXPECT_NE(stray[0].find("late"), std::string::npos);
}

}  // namespace
}  // namespace kiln::worker

namespace kiln::worker {
namespace {

TEST(ActivityAnalysis, OnlyWorkSubmittingDriverCallsCount) {
  ActivityRecord internal;
  internal.kind = ActivityRecord::Kind::kDriverApi;
  internal.thread_id = 55;
  internal.name = "cuCtxGetCurrent";
  ActivityRecord launch = internal;
  launch.name = "cuLaunchKernel";
  ActivityContext c;
  c.harness_threads = {1};
  EXPECT_TRUE(ActivityAnalysis::foreign_thread_calls({internal}, c).empty());
  EXPECT_EQ(ActivityAnalysis::foreign_thread_calls({internal, launch}, c).size(), 1u);
}

}  // namespace
}  // namespace kiln::worker
