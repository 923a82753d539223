#include "kiln/kb/gpu_spec.h"

#include <gtest/gtest.h>

#include "kb_fixture.h"

namespace kiln::kb {
namespace {

const std::filesystem::path kHw = testing::real_kb_dir() / "hw";

TEST(GpuSpec, LoadsEveryBundledSpecWithAllFieldsSourced) {
  auto ids = list_gpu_specs(kHw);
  EXPECT_EQ(ids, (std::vector<std::string>{"b200", "h100_sxm", "h200_sxm"}));
  for (const auto& id : ids) {
    auto spec = load_gpu_spec(kHw, id);
    ASSERT_TRUE(spec) << spec.error().message;
    EXPECT_GT(spec->sms, 100);
    EXPECT_GT(spec->boost_clock_mhz, 1000);
    EXPECT_EQ(spec->smem_per_sm_bytes, 228 * 1024);
    EXPECT_EQ(spec->smem_per_block_max_bytes, 227 * 1024);
    EXPECT_EQ(spec->registers_per_sm, 65536);
    EXPECT_EQ(spec->registers_per_thread_max, 255);
    EXPECT_EQ(spec->max_threads_per_sm, 2048);
    EXPECT_EQ(spec->max_blocks_per_sm, 32);
    EXPECT_GT(spec->l2_bytes, 40 << 20);
    EXPECT_GT(spec->hbm_bandwidth_gbps, 3000);
    EXPECT_GT(spec->peak_tflops("f16"), spec->peak_tflops("f32"));
    EXPECT_NEAR(spec->peak_tflops("e4m3"), 2 * spec->peak_tflops("bf16"), 0.5);
    EXPECT_EQ(spec->peak_tflops("int4"), 0);
  }
}

TEST(GpuSpec, FindsTheH200ByTheNameTheDriverReports) {
  auto spec = load_gpu_spec(kHw, "NVIDIA H200");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->id, "h200_sxm");
  EXPECT_EQ(spec->sms, 132);
  EXPECT_EQ(spec->arch, "sm_90a");
  EXPECT_DOUBLE_EQ(spec->peak_tflops("f16"), 989.4);
  EXPECT_DOUBLE_EQ(spec->hbm_bandwidth_gbps, 4800);
  EXPECT_TRUE(load_gpu_spec(kHw, "h100-sxm"));
  EXPECT_TRUE(load_gpu_spec("B200"));  // the default kb folder
}

TEST(GpuSpec, UnknownNamesAndUnsourcedValuesAreErrors) {
  auto missing = load_gpu_spec(kHw, "A100");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("known: b200, h100_sxm, h200_sxm"), std::string::npos);

  nlohmann::json document = nlohmann::json::parse(testing::read_text(kHw / "h200_sxm.json"));
  document["specs"]["sms"]["source"] = "rumour";
  auto unsourced = parse_gpu_spec(document, "h200_sxm");
  ASSERT_FALSE(unsourced);
  EXPECT_NE(unsourced.error().message.find("`sms` must name a source"), std::string::npos);
  document["specs"].erase("l2_bytes");
  EXPECT_FALSE(parse_gpu_spec(document, "h200_sxm"));
  EXPECT_FALSE(parse_gpu_spec(nlohmann::json::array(), "x"));
}

}  // namespace
}  // namespace kiln::kb
