// The op name -> reference table behind find_zoo_reference.
#include <string_view>

#include "kiln/zoo/references.h"

namespace kiln::zoo {
namespace {

struct Entry {
  std::string_view op;
  kiln_reference_fn full;
  RowReferenceFn rows;  // nullptr: no row sampling
};

constexpr Entry kReferences[] = {
    {"gemm_tn", reference_gemm_tn, reference_gemm_tn_rows},
    {"gemm_tn_fp8", reference_gemm_tn_fp8, reference_gemm_tn_fp8_rows},
    {"gemm_tn_fp8_blockscaled", reference_gemm_tn_fp8_blockscaled,
     reference_gemm_tn_fp8_blockscaled_rows},
    {"gemm_tn_int8", reference_gemm_tn_int8, reference_gemm_tn_int8_rows},
    {"grouped_gemm_tn", reference_grouped_gemm_tn, reference_grouped_gemm_tn_rows},
    {"grouped_gemm_masked", reference_grouped_gemm_masked, reference_grouped_gemm_masked_rows},
    {"reduce_sum", reference_reduce_sum, nullptr},
    {"softmax", reference_softmax, nullptr},
    {"rmsnorm", reference_rmsnorm, nullptr},
    {"layernorm", reference_layernorm, nullptr},
    {"transpose", reference_transpose, nullptr},
    {"scan", reference_scan, nullptr},
    {"topk", reference_topk, nullptr},
    {"silu_mul", reference_silu_mul, nullptr},
    {"attention_fwd", reference_attention_fwd, reference_attention_fwd_rows},
    {"swiglu", reference_swiglu, nullptr},
    {"cross_entropy", reference_cross_entropy, nullptr},
    {"rope", reference_rope, nullptr},
    {"add_rmsnorm_fp8", reference_add_rmsnorm_fp8, nullptr},
    {"attention_decode", reference_attention_decode, nullptr},
    {"moe_gating_topk", reference_moe_gating_topk, nullptr},
    {"moe_permute", reference_moe_permute, nullptr},
    {"moe_unpermute", reference_moe_unpermute, nullptr},
    {"radix_histogram", reference_radix_histogram, nullptr},
    // Memory-bound entries (quantization, KV-cache write).
    {"quant_fp8_group128", reference_quant_fp8_group128, nullptr},
    {"kv_cache_append_rope", reference_kv_cache_append_rope, nullptr},
};

const Entry* find(std::string_view op) {
  for (const Entry& entry : kReferences) {
    if (entry.op == op) return &entry;
  }
  return nullptr;
}

}  // namespace

kiln_reference_fn find_zoo_reference(std::string_view op) {
  const Entry* entry = find(op);
  return entry != nullptr ? entry->full : nullptr;
}

RowReferenceFn find_zoo_row_reference(std::string_view op) {
  const Entry* entry = find(op);
  return entry != nullptr ? entry->rows : nullptr;
}

std::vector<std::string_view> zoo_reference_ops() {
  std::vector<std::string_view> ops;
  for (const Entry& entry : kReferences) ops.push_back(entry.op);
  return ops;
}

}  // namespace kiln::zoo
