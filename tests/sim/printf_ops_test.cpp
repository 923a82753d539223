#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

// printf_kernels.cu as nvcc compiled it, loaded; skipped without the CUDA toolkit.
class PrintfOpsTest : public SimTest {
 protected:
  void SetUp() override {
    const std::string ptx = built_ptx("printf_kernels.ptx");
    if (ptx.empty()) GTEST_SKIP() << "no printf_kernels.ptx (building it needs the CUDA toolkit)";
    m = load(ptx);
  }
  ModuleHandle m = 0;
};

// Hand-written PTX calling vprintf.
class PrintfPtxTest : public SimTest {};

template <typename... T>
std::string c_format(const char* format, T... values) {
  char text[1024];
  std::snprintf(text, sizeof text, format, values...);
  return text;
}

uint64_t string_on_device(SimTest& t, const std::string& text) {
  return t.upload(std::vector<char>(text.begin(), text.end() + 1));
}

TEST_F(PrintfOpsTest, FormatsIntsLongsFloatsStringsAndWidths) {
  const int i = -1234;
  const long long ll = -9876543210123LL;
  const unsigned u = 0xc0ffeeu;
  const unsigned long long ull = 18000000000000000000ULL;
  const float f = 1.375f;
  const double d = -2.5e-3;
  const std::string s = "from global memory";
  uint64_t ps = string_on_device(*this, s), ret = zeros<int32_t>(5);
  LaunchReport r = run(m, "print_types", {1}, {1},
                       Params().add(i).add(ll).add(u).add(ull).add(f).add(d).add(ps).add(ret));
  // The arguments as C promotes them: float to double, char and short to int.
  std::string expect =
      c_format("i=%d %i u=%u x=%x X=%X o=%o c=%c ll=%lld ull=%llu ld=%ld lu=%lu\n", i, i, u, u, u,
               u, 'A' + (i & 15), ll, ull, static_cast<long>(ll), static_cast<unsigned long>(ull)) +
      c_format("f=%f e=%e g=%g E=%E G=%G a=%a %.3f %10.4f|%-10.2e|%+d|% d|%05d|%#x|%#o\n",
               double{f}, d, double{f}, d, d, d, double{f}, d, d, i, i, i, u, u) +
      c_format("%%literal %s and %s|%-6s|%8s|%.2s", "a constant", s.c_str(), "ab", s.c_str(),
               s.c_str()) +
      "no arguments\n" +
      c_format("%*d|%-*d|%hd|%p\n", 6, i, 6, i, static_cast<short>(i), static_cast<void*>(nullptr));
  EXPECT_EQ(r.printf_output, expect);
  EXPECT_EQ(r.printf_dropped_bytes, 0u);
  // CUDA's printf returns the number of arguments after the format.
  EXPECT_EQ(download<int32_t>(ret, 5), (std::vector<int32_t>{11, 14, 5, 0, 6}));
}

// What an H200 prints for these, except where it prints garbage (a conversion the device side
// copied no value for: the simulator prints it as written); vprintf returns the values copied.
TEST_F(PrintfOpsTest, FormsTheDeviceSideSkipsPrintAsOnAGpu) {
  uint64_t ret = zeros<int32_t>(4);
  LaunchReport r = run(m, "print_quirks", {1}, {1}, Params().add(ret));
  EXPECT_EQ(r.printf_output,
            "1|2|3|%d\n"          // hh: the device copies 1, 2, 3 for the three %d
            "%.*f|%d\n"           // .*: the device copies the 2 for the %d
            "%k|%|7\n"            // as glibc prints them
            "(null)|x|(nil)\n");  // glibc's null string and pointer
  EXPECT_EQ(download<int32_t>(ret, 4), (std::vector<int32_t>{3, 1, 1, 3}));
}

TEST_F(PrintfOpsTest, EveryThreadPrintsInTheOrderThreadsRun) {
  const int scale = 3;
  LaunchReport r = run(m, "print_per_thread", {2}, {40}, Params().add(scale));
  // Blocks in order; in a block, warp 0 then warp 1 (each runs to its end: the kernel is far
  // shorter than a scheduling slice); in a warp, the first printf for every lane in lane
  // order, then the divergent branch's printf for its lanes.
  std::string expect;
  for (int block = 0; block < 2; ++block) {
    for (int warp = 0; warp < 2; ++warp) {
      int first = warp * 32, last = std::min(40, first + 32);
      for (int t = first; t < last; ++t)
        expect += c_format("block %d thread %2d: %d\n", block, t, t * scale);
      for (int t = first; t < last; ++t)
        if (t % 3 == 1) expect += c_format("  t=%d took the branch, %f\n", t, t * 0.5);
    }
  }
  EXPECT_EQ(r.printf_output, expect);
}

TEST_F(PrintfOpsTest, ConversionsPastThirtyTwoArgumentsPrintAsWritten) {
  uint64_t ret = zeros<int32_t>(1);
  LaunchReport r = run(m, "print_many", {1}, {1}, Params().add(ret));
  std::string expect;
  for (int n = 1; n <= 32; ++n) expect += std::to_string(n) + " ";
  expect += "%d\n";
  EXPECT_EQ(r.printf_output, expect);
  EXPECT_EQ(download<int32_t>(ret, 1)[0], 32);
}

TEST_F(PrintfOpsTest, OutputPastTheFifoIsDroppedAndCounted) {
  LaunchConfig config;
  config.grid = {1};
  config.block = {32};
  config.printf_buffer_bytes = 100;
  Result<LaunchReport> r = device_.launch(m, "print_per_thread", config, Params().add(1).bytes());
  ASSERT_TRUE(r.ok());
  // Lines of "block 0 thread  t: t\n" are 21 or 22 bytes: four fit in 100, whole.
  std::string kept;
  for (int t = 0; t < 4; ++t) kept += c_format("block 0 thread %2d: %d\n", t, t);
  EXPECT_EQ(r->printf_output, kept);
  size_t total = 0;
  for (int t = 0; t < 32; ++t) {
    total += c_format("block 0 thread %2d: %d\n", t, t).size();
    if (t % 3 == 1) total += c_format("  t=%d took the branch, %f\n", t, t * 0.5).size();
  }
  EXPECT_EQ(r->printf_dropped_bytes, total - kept.size());
}

TEST_F(PrintfOpsTest, AStringPointerToNothingFaultsWithTheAddress) {
  const uint64_t nowhere = 0x40;
  LaunchReport r = launch(m, "print_string", {1}, {1}, Params().add(nowhere));
  ASSERT_EQ(r.faults.size(), 1u);
  EXPECT_EQ(r.faults[0].kind, "out_of_bounds");
  EXPECT_EQ(r.faults[0].address, nowhere);
  EXPECT_NE(r.faults[0].source.find("printf_kernels.cu"), std::string::npos) << r.faults[0].source;
  EXPECT_EQ(r.printf_output, "");
}

// Hand-written PTX: a null format returns -1; a call without a result variable still prints.
TEST_F(PrintfPtxTest, NullFormatReturnsMinusOne) {
  ModuleHandle m = load(ptx_module(R"(
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.global .align 1 .b8 text[4] = {104, 105, 10, 0};

.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<4>;
  mov.u64 %rd1, 0;
  {
  .param .b64 param0;
  st.param.b64 [param0], %rd1;
  .param .b64 param1;
  st.param.b64 [param1], %rd1;
  .param .b32 retval0;
  call.uni (retval0), vprintf, (param0, param1);
  ld.param.b32 %r1, [retval0];
  }
  ld.param.u64 %rd2, [out];
  st.global.u32 [%rd2], %r1;
  mov.u64 %rd3, text;
  cvta.global.u64 %rd3, %rd3;
  {
  .param .b64 param0;
  st.param.b64 [param0], %rd3;
  .param .b64 param1;
  st.param.b64 [param1], %rd1;
  call.uni vprintf, (param0, param1);
  }
  ret;
}
)"));
  uint64_t out = zeros<int32_t>(1);
  LaunchReport r = run(m, "k", {1}, {2}, Params().add(out));
  EXPECT_EQ(download<int32_t>(out, 1)[0], -1);
  EXPECT_EQ(r.printf_output, "hi\nhi\n");
}

}  // namespace
}  // namespace kiln::sim::testing
