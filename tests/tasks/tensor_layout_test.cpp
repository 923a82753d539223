// tensor_layout.h: a workload's tensors and scalars from the task's signature.
#include "kiln/tasks/tensor_layout.h"

#include <gtest/gtest.h>

#include "bundle_fixture.h"

namespace kiln::tasks {
namespace {

TEST(TensorLayout, LaysOutTheGemm) {
  auto task = load_task(testing::bundled_tasks_dir() / "fp16_gemm");
  ASSERT_TRUE(task.ok()) << task.error().message;
  auto workload = find_workload(*task, "4000x3000x2000");
  ASSERT_TRUE(workload.ok());
  auto layout = layout_workload(*task, *workload);
  ASSERT_TRUE(layout.ok()) << layout.error().message;
  ASSERT_EQ(layout->tensors.size(), 3u);
  const TensorLayout& a = layout->tensors[0];
  EXPECT_EQ(a.name, "A");
  EXPECT_EQ(a.dtype, KILN_F16);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{4000, 2000}));
  EXPECT_EQ(a.strides, (std::vector<int64_t>{2000, 1}));
  EXPECT_EQ(a.bytes(), 4000 * 2000 * 2);
  EXPECT_FALSE(a.is_output);
  EXPECT_EQ(a.leading_dim, "M");
  EXPECT_TRUE(layout->tensors[2].is_output);
  EXPECT_EQ(layout->flops, 2.0 * 4000 * 3000 * 2000);
  EXPECT_EQ(layout->tensors[2].index_of(3001), (std::vector<int64_t>{1, 1}));
  int dummy[3];
  const auto abi = layout->abi_tensors({&dummy[0], &dummy[1], &dummy[2]});
  EXPECT_EQ(abi[1].shape[0], 3000);
  EXPECT_EQ(abi[1].strides[0], 2000);
  EXPECT_STREQ(abi[2].name, "C");
  EXPECT_EQ(abi[2].data, &dummy[2]);
}

TEST(TensorLayout, ReadsTheRmsnormScalar) {
  auto task = load_task(testing::bundled_tasks_dir() / "rmsnorm");
  ASSERT_TRUE(task.ok()) << task.error().message;
  auto layout = layout_workload(*task, task->workloads.back());
  ASSERT_TRUE(layout.ok());
  ASSERT_EQ(layout->scalars.size(), 1u);
  EXPECT_EQ(layout->scalars[0].dtype, KILN_F64);
  EXPECT_DOUBLE_EQ(layout->scalars[0].f, 1e-6);
  const auto abi = layout->abi_scalars();
  EXPECT_STREQ(abi[0].name, "eps");
  EXPECT_DOUBLE_EQ(abi[0].value.f, 1e-6);
  EXPECT_EQ(layout->tensors[1].shape, (std::vector<int64_t>{16384}));
}

TEST(TensorLayout, UnknownWorkloadListsTheNames) {
  auto task = load_task(testing::bundled_tasks_dir() / "fp16_gemm");
  ASSERT_TRUE(task.ok());
  auto missing = find_workload(*task, "1x1x1");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("4096x4096x4096"), std::string::npos);
  EXPECT_TRUE(find_workload(*task, "33x17x40").ok());  // sim workloads are found too
}

TEST(TensorLayout, DtypeNames) {
  EXPECT_EQ(*parse_dtype("bf16"), KILN_BF16);
  EXPECT_FALSE(parse_dtype("fp16").ok());
  EXPECT_STREQ(dtype_name(KILN_E4M3), "e4m3");
}

}  // namespace
}  // namespace kiln::tasks
