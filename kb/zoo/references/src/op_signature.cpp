#include "kiln/zoo/op_signature.h"

namespace kiln::zoo {
namespace {

OpTensor tensor(std::string name, std::vector<kiln_dtype> dtypes, std::vector<std::string> shape,
                std::string same_dtype_as = "") {
  return OpTensor{std::move(name), std::move(dtypes), std::move(shape), std::move(same_dtype_as)};
}

std::vector<OpSignature> build_table() {
  const std::vector<kiln_dtype> half_types = {KILN_F16, KILN_BF16};
  return {
      {"gemm_tn",
       {tensor("A", half_types, {"M", "K"}), tensor("B", half_types, {"N", "K"}, "A")},
       {tensor("C", half_types, {"M", "N"}, "A")},
       {}},
      {"gemm_tn_fp8",
       {tensor("A", {KILN_E4M3}, {"M", "K"}), tensor("B", {KILN_E4M3}, {"N", "K"}),
        tensor("scale_a", {KILN_F32}, {"1"}), tensor("scale_b", {KILN_F32}, {"1"})},
       {tensor("C", {KILN_BF16}, {"M", "N"})},
       {}},
      {"gemm_tn_fp8_blockscaled",
       {tensor("A", {KILN_E4M3}, {"M", "K"}), tensor("B", {KILN_E4M3}, {"N", "K"}),
        tensor("scale_a", {KILN_F32}, {"M", "(K+127)/128"}),
        tensor("scale_b", {KILN_F32}, {"(N+127)/128", "(K+127)/128"})},
       {tensor("C", {KILN_BF16}, {"M", "N"})},
       {}},
      {"gemm_tn_int8",
       {tensor("A", {KILN_I8}, {"M", "K"}), tensor("B", {KILN_I8}, {"N", "K"})},
       {tensor("C", {KILN_I32}, {"M", "N"})},
       {}},
      {"grouped_gemm_tn",
       {tensor("A", half_types, {"M", "K"}), tensor("B", half_types, {"G", "N", "K"}, "A"),
        tensor("offsets", {KILN_I32}, {"G+1"})},
       {tensor("C", half_types, {"M", "N"}, "A")},
       {}},
      {"grouped_gemm_masked",
       {tensor("A", half_types, {"G", "M", "K"}), tensor("B", half_types, {"G", "N", "K"}, "A"),
        tensor("masked_m", {KILN_I32}, {"G"})},
       {tensor("C", half_types, {"G", "M", "N"}, "A")},
       {}},
      {"reduce_sum", {tensor("x", {KILN_F32}, {"N"})}, {tensor("y", {KILN_F32}, {"1"})}, {}},
      {"softmax", {tensor("x", {KILN_F32}, {"R", "C"})}, {tensor("y", {KILN_F32}, {"R", "C"})}, {}},
      {"rmsnorm",
       {tensor("x", {KILN_BF16}, {"T", "H"}), tensor("w", {KILN_BF16}, {"H"})},
       {tensor("y", {KILN_BF16}, {"T", "H"})},
       {{"eps", KILN_F64}}},
      {"layernorm",
       {tensor("x", {KILN_BF16}, {"T", "H"}), tensor("gamma", {KILN_BF16}, {"H"}),
        tensor("beta", {KILN_BF16}, {"H"})},
       {tensor("y", {KILN_BF16}, {"T", "H"})},
       {{"eps", KILN_F64}}},
      {"transpose",
       {tensor("x", {KILN_F32}, {"R", "C"})},
       {tensor("y", {KILN_F32}, {"C", "R"})},
       {}},
      {"scan", {tensor("x", {KILN_I32}, {"N"})}, {tensor("y", {KILN_I32}, {"N"})}, {}},
      {"topk",
       {tensor("x", {KILN_F32}, {"R", "C"})},
       {tensor("values", {KILN_F32}, {"R", "K"}), tensor("indices", {KILN_I32}, {"R", "K"})},
       {}},
      {"silu_mul",
       {tensor("gate", {KILN_BF16}, {"N"}), tensor("up", {KILN_BF16}, {"N"})},
       {tensor("y", {KILN_BF16}, {"N"})},
       {}},
      {"attention_fwd",
       {tensor("Q", half_types, {"B", "H", "S", "D"}),
        tensor("K", half_types, {"B", "H", "S", "D"}, "Q"),
        tensor("V", half_types, {"B", "H", "S", "D"}, "Q")},
       {tensor("O", half_types, {"B", "H", "S", "D"}, "Q")},
       {{"causal", KILN_I64}, {"scale", KILN_F64}}},
      {"swiglu",
       {tensor("x", {KILN_BF16}, {"T", "2*F"})},
       {tensor("y", {KILN_BF16}, {"T", "F"})},
       {}},
      {"cross_entropy",
       {tensor("logits", {KILN_BF16}, {"R", "V"}), tensor("targets", {KILN_I32}, {"R"})},
       {tensor("loss", {KILN_F32}, {"R"})},
       {}},
      {"rope",
       {tensor("q", {KILN_BF16}, {"T", "HQ", "D"}), tensor("k", {KILN_BF16}, {"T", "HK", "D"}),
        tensor("positions", {KILN_I32}, {"T"}), tensor("cos", {KILN_F32}, {"P", "D/2"}),
        tensor("sin", {KILN_F32}, {"P", "D/2"})},
       {tensor("q_out", {KILN_BF16}, {"T", "HQ", "D"}),
        tensor("k_out", {KILN_BF16}, {"T", "HK", "D"})},
       {}},
      {"add_rmsnorm_fp8",
       {tensor("x", {KILN_BF16}, {"T", "H"}), tensor("residual", {KILN_BF16}, {"T", "H"}),
        tensor("w", {KILN_BF16}, {"H"})},
       {tensor("residual_out", {KILN_BF16}, {"T", "H"}), tensor("q", {KILN_E4M3}, {"T", "H"}),
        tensor("scales", {KILN_F32}, {"T", "H/128"})},
       {{"eps", KILN_F64}}},
      {"attention_decode",
       {tensor("Q", half_types, {"B", "HQ", "D"}),
        tensor("K", half_types, {"B", "HK", "S", "D"}, "Q"),
        tensor("V", half_types, {"B", "HK", "S", "D"}, "Q")},
       {tensor("O", half_types, {"B", "HQ", "D"}, "Q")},
       {{"scale", KILN_F64}}},
      {"moe_gating_topk",
       {tensor("logits", {KILN_F32}, {"T", "E"})},
       {tensor("weights", {KILN_F32}, {"T", "K"}), tensor("indices", {KILN_I32}, {"T", "K"})},
       {{"renormalize", KILN_I64}}},
      {"moe_permute",
       {tensor("x", half_types, {"T", "H"}), tensor("indices", {KILN_I32}, {"T", "K"})},
       {tensor("x_sorted", half_types, {"T*K", "H"}, "x"),
        tensor("expert_offsets", {KILN_I32}, {"E+1"}), tensor("dest_rows", {KILN_I32}, {"T", "K"})},
       {}},
      {"moe_unpermute",
       {tensor("y", half_types, {"T*K", "H"}), tensor("dest_rows", {KILN_I32}, {"T", "K"}),
        tensor("weights", {KILN_F32}, {"T", "K"})},
       {tensor("out", half_types, {"T", "H"}, "y")},
       {}},
      {"radix_histogram",
       {tensor("keys", {KILN_I32}, {"N"})},
       {tensor("counts", {KILN_I32}, {"256"})},
       {{"shift", KILN_I64}}},
      // Memory-bound entries (quantization, KV-cache write).
      {"quant_fp8_group128",
       {tensor("x", {KILN_BF16}, {"T", "H"})},
       {tensor("q", {KILN_E4M3}, {"T", "H"}), tensor("scales", {KILN_F32}, {"T", "H/128"})},
       {}},
      {"kv_cache_append_rope",
       {tensor("k_new", {KILN_BF16}, {"T", "HK", "D"}),
        tensor("v_new", {KILN_BF16}, {"T", "HK", "D"}), tensor("positions", {KILN_I32}, {"T"}),
        tensor("cos", {KILN_F32}, {"S", "D/2"}), tensor("sin", {KILN_F32}, {"S", "D/2"})},
       {tensor("k_cache", {KILN_BF16}, {"S", "HK", "D"}),
        tensor("v_cache", {KILN_BF16}, {"S", "HK", "D"})},
       {}},
  };
}

}  // namespace

const std::vector<OpSignature>& op_signatures() {
  static const std::vector<OpSignature> table = build_table();
  return table;
}

const OpSignature* find_op_signature(std::string_view op) {
  for (const auto& signature : op_signatures()) {
    if (signature.op == op) return &signature;
  }
  return nullptr;
}

}  // namespace kiln::zoo
