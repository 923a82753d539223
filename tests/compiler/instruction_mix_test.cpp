// instruction_mix.h: static counts per kernel from the PTX.
#include "kiln/compiler/instruction_mix.h"

#include <gtest/gtest.h>

#include "kiln/ptx/parser.h"

namespace kiln::compiler {
namespace {

constexpr const char* kPtx = R"(.version 8.8
.target sm_90a
.address_size 64

.visible .entry mixer(
	.param .u64 mixer_param_0
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<20>;
	.reg .f32 	%f<20>;
	.reg .b64 	%rd<8>;
	.shared .align 16 .b8 tile[4096];

	ld.param.u64 	%rd1, [mixer_param_0];
	cvta.to.global.u64 	%rd2, %rd1;
	ld.global.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd2];
	ld.global.v4.f32 	{%f5, %f6, %f7, %f8}, [%rd2+16];
	ld.global.f32 	%f9, [%rd2+32];
	mov.u32 	%r1, tile;
	st.shared.f32 	[%r1], %f1;
	st.shared.v2.f32 	[%r1+8], {%f2, %f3};
	cp.async.ca.shared.global 	[%r1], [%rd2], 16;
	cp.async.ca.shared.global 	[%r1+16], [%rd2+16], 8;
	cp.async.commit_group;
	cp.async.wait_group 	0;
	bar.sync 	0;
	ldmatrix.sync.aligned.m8n8.x4.shared.b16 	{%r2, %r3, %r4, %r5}, [%r1];
	mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 	{%f10, %f11, %f12, %f13}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%f10, %f11, %f12, %f13};
	shfl.sync.bfly.b32 	%r8, %r2, 1, 31, -1;
	atom.global.add.f32 	%f14, [%rd2], %f9;
	add.f32 	%f15, %f14, %f10;
	st.global.f32 	[%rd2], %f15;
	ret;
}

.visible .entry empty()
{
	ret;
}
)";

ptx::Module parse(const char* text) {
  auto parsed = ptx::parse_ptx(text);
  if (!parsed) ADD_FAILURE() << parsed.error().message;
  return parsed ? parsed->module : ptx::Module{};
}

TEST(InstructionMix, CountsMemoryBySpaceAndWidth) {
  const auto mixes = kernel_instruction_mixes(parse(kPtx));
  ASSERT_EQ(mixes.count("mixer"), 1u);
  const InstructionMix& mix = mixes.at("mixer");
  EXPECT_EQ(mix.count("ld.global.128"), 2);
  EXPECT_EQ(mix.count("ld.global.32"), 1);
  EXPECT_EQ(mix.count("st.shared.32"), 1);
  EXPECT_EQ(mix.count("st.shared.64"), 1);
  EXPECT_EQ(mix.count("st.global.32"), 1);
  EXPECT_EQ(mix.count("ld.param.64"), 0);  // kernel arguments are not memory traffic
}

TEST(InstructionMix, CountsTensorCoreAsyncCopyBarrierAndWarpOps) {
  const InstructionMix mix = kernel_instruction_mixes(parse(kPtx)).at("mixer");
  EXPECT_EQ(mix.count("mma.sync"), 1);
  EXPECT_EQ(mix.tensor_core_ops(), 1);
  EXPECT_EQ(mix.count("ldmatrix"), 1);
  EXPECT_EQ(mix.count("cp.async.16"), 1);
  EXPECT_EQ(mix.count("cp.async.8"), 1);
  EXPECT_EQ(mix.count("cp.async.commit_group"), 1);
  EXPECT_EQ(mix.count("cp.async.wait"), 1);
  EXPECT_EQ(mix.count("bar.sync"), 1);
  EXPECT_EQ(mix.count("shfl.sync"), 1);
  EXPECT_EQ(mix.count("atom.global"), 1);
}

TEST(InstructionMix, TotalCountsEveryInstructionOnce) {
  const auto mixes = kernel_instruction_mixes(parse(kPtx));
  EXPECT_EQ(mixes.at("mixer").total, 20);
  EXPECT_EQ(mixes.at("empty").total, 1);
  EXPECT_TRUE(mixes.at("empty").counts.empty());
}

TEST(InstructionMix, HopperFormsHaveTheirOwnKeys) {
  const auto module = parse(R"(.version 8.8
.target sm_90a
.address_size 64
.visible .entry hopper(.param .u64 p)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<8>;
	.shared .align 8 .b64 bar;
	mbarrier.init.shared::cta.b64 	[bar], 1;
	mbarrier.arrive.expect_tx.shared::cta.b64 	%rd1, [bar], 1024;
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes 	[%r1], [%rd2, {%r2, %r3}], [bar];
	mbarrier.try_wait.parity.shared::cta.b64 	%p1, [bar], 0;
	wgmma.fence.sync.aligned;
	wgmma.commit_group.sync.aligned;
	wgmma.wait_group.sync.aligned 	0;
	fence.proxy.async.shared::cta;
	ret;
}
)");
  const InstructionMix mix = kernel_instruction_mixes(module).at("hopper");
  EXPECT_EQ(mix.count("mbarrier.init"), 1);
  EXPECT_EQ(mix.count("mbarrier.arrive"), 1);
  EXPECT_EQ(mix.count("mbarrier.try_wait"), 1);
  EXPECT_EQ(mix.count("cp.async.bulk.tensor"), 1);
  EXPECT_EQ(mix.count("wgmma.fence"), 1);
  EXPECT_EQ(mix.count("wgmma.commit_group"), 1);
  EXPECT_EQ(mix.count("fence.proxy"), 1);
}

TEST(InstructionMix, RoundTripsThroughJson) {
  const InstructionMix mix = kernel_instruction_mixes(parse(kPtx)).at("mixer");
  const InstructionMix back = InstructionMix::from_json(mix.to_json());
  EXPECT_EQ(back.counts, mix.counts);
  EXPECT_EQ(back.total, mix.total);
  EXPECT_EQ(InstructionMix::from_json(nlohmann::json::object()).total, 0);
}

}  // namespace
}  // namespace kiln::compiler
