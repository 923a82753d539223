// Checks find_zoo_reference and the op table (kb/zoo/references/src/registry.cpp,
// op_signature.cpp): every op of the README has a reference, and every reference rejects
// calls with no tensors.
#include <gtest/gtest.h>

#include "kiln/zoo/op_signature.h"
#include "kiln/zoo/references.h"

namespace kiln::zoo {
namespace {

TEST(ZooReferences, EveryOpOfTheTableHasAReference) {
  const auto ops = zoo_reference_ops();
  ASSERT_EQ(ops.size(), op_signatures().size());
  for (const OpSignature& signature : op_signatures()) {
    EXPECT_NE(find_zoo_reference(signature.op), nullptr) << signature.op;
  }
  for (const char* op :
       {"gemm_tn", "gemm_tn_fp8", "gemm_tn_fp8_blockscaled", "gemm_tn_int8", "grouped_gemm_tn",
        "grouped_gemm_masked", "reduce_sum", "softmax", "rmsnorm", "layernorm", "transpose", "scan",
        "topk", "silu_mul", "attention_fwd"}) {
    EXPECT_NE(find_op_signature(op), nullptr) << op;
  }
}

TEST(ZooReferences, UnknownOpsHaveNone) {
  EXPECT_EQ(find_zoo_reference("gemm_nn"), nullptr);
  EXPECT_EQ(find_zoo_reference(""), nullptr);
  EXPECT_EQ(find_zoo_row_reference("softmax"), nullptr);
  EXPECT_NE(find_zoo_row_reference("gemm_tn"), nullptr);
  EXPECT_NE(find_zoo_row_reference("attention_fwd"), nullptr);
  EXPECT_NE(find_zoo_row_reference("gemm_tn_int8"), nullptr);
  EXPECT_NE(find_zoo_row_reference("grouped_gemm_masked"), nullptr);
}

TEST(ZooReferences, EveryReferenceRejectsMissingTensors) {
  for (const auto op : zoo_reference_ops()) {
    const kiln_reference_fn fn = find_zoo_reference(op);
    EXPECT_EQ(fn(nullptr, 0, nullptr, 0), KILN_ERR_BAD_ARGUMENT) << op;
    kiln_tensor one{};
    EXPECT_EQ(fn(&one, 1, nullptr, 0), KILN_ERR_BAD_ARGUMENT) << op;
  }
}

TEST(ZooReferences, TableSpellsTheReadmeSignatures) {
  const OpSignature* grouped = find_op_signature("grouped_gemm_tn");
  ASSERT_NE(grouped, nullptr);
  ASSERT_EQ(grouped->inputs.size(), 3u);
  EXPECT_EQ(grouped->inputs[2].name, "offsets");
  EXPECT_EQ(grouped->inputs[2].shape, (std::vector<std::string>{"G+1"}));
  const OpSignature* attention = find_op_signature("attention_fwd");
  ASSERT_NE(attention, nullptr);
  ASSERT_EQ(attention->scalars.size(), 2u);
  EXPECT_EQ(attention->scalars[0].name, "causal");
  EXPECT_EQ(attention->scalars[0].dtype, KILN_I64);
  EXPECT_EQ(attention->scalars[1].name, "scale");
}

}  // namespace
}  // namespace kiln::zoo
