#include "kiln/sim/device.h"

#include <gtest/gtest.h>

#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

class DeviceTest : public SimTest {};

const char* const kStore = R"(
.visible .global .align 4 .u32 table[4] = {7, 8, 9, 10};
.visible .const .align 8 .f64 scale = 0d4000000000000000;

.visible .entry store_tid(.param .u64 out, .param .u32 n, .param .u8 flag)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<6>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r5, [n];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  setp.ge.u32 %p1, %r4, %r5;
  @%p1 bra DONE;
  mul.wide.u32 %rd2, %r4, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
DONE:
  ret;
}
)";

TEST_F(DeviceTest, AllocationsAre256ByteAlignedAndFreeRejectsUnknownAddresses) {
  Result<uint64_t> a = device_.allocate(10);
  Result<uint64_t> b = device_.allocate(1000);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a % 256, 0u);
  EXPECT_EQ(*b % 256, 0u);
  EXPECT_NE(*a, *b);
  EXPECT_TRUE(device_.free(*a).ok());
  Status again = device_.free(*a);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("not the start of a live allocation"), std::string::npos);
}

TEST_F(DeviceTest, CopiesRoundTripAndRejectOutOfRange) {
  uint64_t a = upload(std::vector<uint32_t>{1, 2, 3, 4});
  EXPECT_EQ(download<uint32_t>(a, 4), (std::vector<uint32_t>{1, 2, 3, 4}));
  uint32_t big[8] = {};
  Status s = device_.copy_to_device(a, big, sizeof big);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("past the end"), std::string::npos);
  ASSERT_TRUE(device_.fill(a, 0xff, 8).ok());
  EXPECT_EQ(download<uint32_t>(a, 4), (std::vector<uint32_t>{~0u, ~0u, 3, 4}));
  uint64_t b = zeros<uint32_t>(4);
  ASSERT_TRUE(device_.copy_on_device(b, a, 16).ok());
  EXPECT_EQ(download<uint32_t>(b, 4), (std::vector<uint32_t>{~0u, ~0u, 3, 4}));
}

TEST_F(DeviceTest, LoadModuleReportsParseErrorsWithLine) {
  Result<ModuleHandle> m = device_.load_module(ptx_module("this is not ptx"), "bad.ptx");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("bad.ptx:"), std::string::npos);
}

TEST_F(DeviceTest, KernelInfoLaysOutParametersWithAlignment) {
  ModuleHandle m = load(ptx_module(kStore));
  Result<KernelInfo> info = device_.kernel(m, "store_tid");
  ASSERT_TRUE(info.ok());
  ASSERT_EQ(info->params.size(), 3u);
  EXPECT_EQ(info->params[0].offset, 0u);
  EXPECT_EQ(info->params[1].offset, 8u);
  EXPECT_EQ(info->params[2].offset, 12u);
  EXPECT_EQ(info->param_bytes, 13u);
  Result<KernelInfo> missing = device_.kernel(m, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("store_tid"), std::string::npos);
}

TEST_F(DeviceTest, ModuleVariablesGetAddressesAndInitializers) {
  ModuleHandle m = load(ptx_module(kStore));
  Result<uint64_t> table = device_.symbol_address(m, "table");
  ASSERT_TRUE(table.ok());
  EXPECT_EQ(download<uint32_t>(*table, 4), (std::vector<uint32_t>{7, 8, 9, 10}));
  Result<uint64_t> scale = device_.symbol_address(m, "scale");
  ASSERT_TRUE(scale.ok());
  EXPECT_EQ(download<double>(*scale, 1)[0], 2.0);
  EXPECT_FALSE(device_.symbol_address(m, "missing").ok());
}

TEST_F(DeviceTest, LaunchRunsEveryThreadOfEveryBlock) {
  ModuleHandle m = load(ptx_module(kStore));
  uint64_t out = upload(std::vector<uint32_t>(200, 0xdeadbeef));
  Params p;
  p.add(out).add(uint32_t{150}).add(uint8_t{0});
  LaunchReport r = run(m, "store_tid", {3}, {64}, p);
  ASSERT_TRUE(r.ok());
  std::vector<uint32_t> got = download<uint32_t>(out, 200);
  for (uint32_t i = 0; i < 200; ++i) EXPECT_EQ(got[i], i < 150 ? i : 0xdeadbeef) << i;
  EXPECT_GT(r.stats.warp_instructions, 0u);
  EXPECT_EQ(stat(r.stats.bytes_by_space, "global"), 150u * 4);
}

TEST_F(DeviceTest, InvalidLaunchesAreReportedAsFaults) {
  ModuleHandle m = load(ptx_module(kStore));
  Params p;
  p.add(uint64_t{0}).add(uint32_t{0}).add(uint8_t{0});
  LaunchReport big = launch(m, "store_tid", {1}, {2048}, p);
  ASSERT_EQ(big.faults.size(), 1u);
  EXPECT_EQ(big.faults[0].kind, "invalid_launch");
  Params short_params;
  short_params.add(uint64_t{0});
  LaunchReport few = launch(m, "store_tid", {1}, {32}, short_params);
  ASSERT_EQ(few.faults.size(), 1u);
  EXPECT_NE(few.faults[0].message.find("13 bytes of parameters"), std::string::npos);
}

}  // namespace
}  // namespace kiln::sim::testing
