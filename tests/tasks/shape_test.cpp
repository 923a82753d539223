// parse_shape: ad-hoc small workloads for the simulator, checked against a task's dims and capped.
#include "kiln/tasks/shape.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kiln::tasks {
namespace {

using ::testing::HasSubstr;

class ShapeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = load_task(std::string(KILN_TASKS_DIR) + "/fp16_gemm");
    ASSERT_TRUE(loaded) << loaded.error().message;
    gemm_ = *loaded;
  }
  std::string error_of(const std::string& text) {
    auto shape = parse_shape(gemm_, text);
    return shape ? "(parsed as " + shape->name + ")" : shape.error().message;
  }
  Task gemm_;
};

TEST_F(ShapeTest, NamesTheWorkloadByItsValuesInTheTasksDimOrder) {
  auto shape = parse_shape(gemm_, " K=64, M=256 ,N=128");
  ASSERT_TRUE(shape) << shape.error().message;
  EXPECT_EQ(shape->name, "256x128x64");
  EXPECT_EQ(shape->dims.at("M"), 256);
  EXPECT_EQ(shape->dims.at("N"), 128);
  EXPECT_EQ(shape->dims.at("K"), 64);
  EXPECT_TRUE(parse_shape(gemm_, "M=512,N=512,K=512"));  // exactly at the flops cap
}

TEST_F(ShapeTest, RefusesShapesThatDoNotNameEveryDimOnce) {
  EXPECT_THAT(error_of("M=64,N=64"),
              HasSubstr("dim K is missing; task fp16_gemm has dims M, N, K"));
  EXPECT_THAT(error_of("M=64,N=64,K=64,T=2"), HasSubstr("unknown dim 'T'"));
  EXPECT_THAT(error_of("M=64,M=64,N=1,K=1"), HasSubstr("M given twice"));
  EXPECT_THAT(error_of("M=64,N=64,K"), HasSubstr("'K' is not DIM=VALUE"));
  EXPECT_THAT(error_of(""), HasSubstr("is not DIM=VALUE"));
  EXPECT_THAT(error_of("M=0,N=1,K=1"), HasSubstr("M must be a whole number >= 1, got '0'"));
  EXPECT_THAT(error_of("M=1x,N=1,K=1"), HasSubstr("got '1x'"));
}

TEST_F(ShapeTest, RefusesLargeShapesPointingAtBenchmark) {
  EXPECT_THAT(error_of("M=513,N=512,K=512"), HasSubstr("exceeds the cap of"));
  EXPECT_THAT(error_of("M=513,N=512,K=512"), HasSubstr("benchmark"));
  EXPECT_THAT(error_of("M=4096,N=1,K=4096"), HasSubstr("tensor A exceeds the 4194304-element cap"));
  EXPECT_THAT(error_of("M=9223372036854775807,N=2,K=2"), HasSubstr("cap"));
}

}  // namespace
}  // namespace kiln::tasks
