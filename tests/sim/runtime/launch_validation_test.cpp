#include "launch_validation.h"

#include <gtest/gtest.h>

namespace kiln::sim::runtime {
namespace {

KernelInfo plain_kernel(uint32_t static_shared = 0) {
  KernelInfo kernel;
  kernel.name = "gemm";
  kernel.static_shared_bytes = static_shared;
  kernel.required_block = {0, 0, 0};  // as the core reports "no .reqntid"
  return kernel;
}

LaunchConfig config(Dim3 grid, Dim3 block, uint32_t dynamic = 0, Dim3 cluster = {1, 1, 1}) {
  LaunchConfig c;
  c.grid = grid;
  c.block = block;
  c.dynamic_shared_bytes = dynamic;
  c.cluster = cluster;
  return c;
}

const DeviceProperties kH200;

TEST(LaunchValidation, AcceptsAnOrdinaryLaunch) {
  EXPECT_TRUE(
      validate_launch(kH200, plain_kernel(), {}, config({64, 64, 1}, {256, 1, 1}), false).ok());
}

TEST(LaunchValidation, RejectsZeroGridAsInvalidConfiguration) {
  const auto check =
      validate_launch(kH200, plain_kernel(), {}, config({0, 1, 1}, {32, 1, 1}), false);
  EXPECT_EQ(check.code, cudaErrorInvalidConfiguration);
}

TEST(LaunchValidation, RejectsBlockOverTheThreadLimit) {
  const auto check =
      validate_launch(kH200, plain_kernel(), {}, config({1, 1, 1}, {2048, 1, 1}), false);
  EXPECT_EQ(check.code, cudaErrorInvalidConfiguration);
  EXPECT_NE(check.message.find("1024"), std::string::npos);
  EXPECT_EQ(validate_launch(kH200, plain_kernel(), {}, config({1, 1, 1}, {32, 32, 2}), false).code,
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(validate_launch(kH200, plain_kernel(), {}, config({1, 1, 1}, {1, 1, 65}), false).code,
            cudaErrorInvalidConfiguration);
}

TEST(LaunchValidation, RejectsGridYOver65535) {
  const auto check =
      validate_launch(kH200, plain_kernel(), {}, config({1, 65536, 1}, {32, 1, 1}), false);
  EXPECT_EQ(check.code, cudaErrorInvalidConfiguration);
}

TEST(LaunchValidation, RejectsMoreThreadsThanLaunchBoundsAsOutOfResources) {
  KernelInfo kernel = plain_kernel();
  kernel.max_threads = 128;
  const auto check = validate_launch(kH200, kernel, {}, config({1, 1, 1}, {256, 1, 1}), false);
  EXPECT_EQ(check.code, cudaErrorLaunchOutOfResources);
  EXPECT_NE(check.message.find("__launch_bounds__"), std::string::npos);
}

TEST(LaunchValidation, RejectsBlockDifferentFromReqntid) {
  KernelInfo kernel = plain_kernel();
  kernel.required_block = {128, 1, 1};
  EXPECT_FALSE(validate_launch(kH200, kernel, {}, config({1, 1, 1}, {64, 1, 1}), false).ok());
  EXPECT_TRUE(validate_launch(kH200, kernel, {}, config({1, 1, 1}, {128, 1, 1}), false).ok());
}

TEST(LaunchValidation, DynamicSharedOver48KBNeedsTheAttribute) {
  const auto check =
      validate_launch(kH200, plain_kernel(), {}, config({1, 1, 1}, {128, 1, 1}, 64 * 1024), false);
  EXPECT_EQ(check.code, cudaErrorInvalidValue);
  EXPECT_NE(check.message.find("cudaFuncAttributeMaxDynamicSharedMemorySize"), std::string::npos);
  FunctionLimits opted_in;
  opted_in.max_dynamic_shared = 64 * 1024;
  EXPECT_TRUE(validate_launch(kH200, plain_kernel(), opted_in,
                              config({1, 1, 1}, {128, 1, 1}, 64 * 1024), false)
                  .ok());
}

TEST(LaunchValidation, StaticSharedCountsAgainstThe48KBDefault) {
  const auto check = validate_launch(kH200, plain_kernel(40 * 1024), {},
                                     config({1, 1, 1}, {128, 1, 1}, 9 * 1024), false);
  EXPECT_EQ(check.code, cudaErrorInvalidValue);
  EXPECT_TRUE(validate_launch(kH200, plain_kernel(40 * 1024), {},
                              config({1, 1, 1}, {128, 1, 1}, 8 * 1024), false)
                  .ok());
}

TEST(LaunchValidation, DynamicSharedAboveTheAttributeIsRejected) {
  FunctionLimits limits;
  limits.max_dynamic_shared = 100 * 1024;
  const auto check = validate_launch(kH200, plain_kernel(), limits,
                                     config({1, 1, 1}, {128, 1, 1}, 120 * 1024), false);
  EXPECT_EQ(check.code, cudaErrorInvalidValue);
  EXPECT_NE(check.message.find("raise it"), std::string::npos);
}

TEST(LaunchValidation, OptInMaximumLeavesRoomForStaticShared) {
  EXPECT_EQ(optin_max_dynamic_shared(kH200, plain_kernel()), 227u * 1024);
  EXPECT_EQ(optin_max_dynamic_shared(kH200, plain_kernel(1024)), 226u * 1024);
  EXPECT_EQ(default_max_dynamic_shared(kH200, plain_kernel(1024)), 47u * 1024);
}

TEST(LaunchValidation, ClusterMustDivideTheGrid) {
  const auto check =
      validate_launch(kH200, plain_kernel(), {}, config({6, 1, 1}, {64, 1, 1}, 0, {4, 1, 1}), true);
  EXPECT_EQ(check.code, cudaErrorInvalidClusterSize);
  EXPECT_TRUE(
      validate_launch(kH200, plain_kernel(), {}, config({8, 1, 1}, {64, 1, 1}, 0, {4, 1, 1}), true)
          .ok());
}

TEST(LaunchValidation, ClusterOver8NeedsNonPortableAttribute) {
  const auto launch = config({16, 1, 1}, {64, 1, 1}, 0, {16, 1, 1});
  EXPECT_EQ(validate_launch(kH200, plain_kernel(), {}, launch, true).code,
            cudaErrorInvalidClusterSize);
  FunctionLimits limits;
  limits.non_portable_cluster = true;
  EXPECT_TRUE(validate_launch(kH200, plain_kernel(), limits, launch, true).ok());
  EXPECT_FALSE(validate_launch(kH200, plain_kernel(), limits,
                               config({32, 1, 1}, {64, 1, 1}, 0, {32, 1, 1}), true)
                   .ok());
}

TEST(LaunchValidation, CompiledClusterAppliesAndConflictsWithALaunchAttribute) {
  KernelInfo kernel = plain_kernel();
  kernel.cluster = {2, 1, 1};
  EXPECT_EQ(validate_launch(kH200, kernel, {}, config({3, 1, 1}, {64, 1, 1}), false).code,
            cudaErrorInvalidClusterSize);
  EXPECT_TRUE(validate_launch(kH200, kernel, {}, config({4, 1, 1}, {64, 1, 1}), false).ok());
  EXPECT_EQ(
      validate_launch(kH200, kernel, {}, config({4, 1, 1}, {64, 1, 1}, 0, {4, 1, 1}), true).code,
      cudaErrorInvalidClusterSize);
}

}  // namespace
}  // namespace kiln::sim::runtime
