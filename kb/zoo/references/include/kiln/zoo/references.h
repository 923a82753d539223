// CPU references for the zoo's ops (kb/zoo/README.md, "Ops and their signatures").
//
// Each reference takes the kiln ABI with host pointers, checks tensor and scalar counts,
// dtypes, ranks and shapes (KILN_ERR_BAD_ARGUMENT otherwise), accepts any strides (in
// elements), accumulates in double, and rounds each output once to its dtype, to nearest
// even. Results do not depend on the number of threads.
//
// GEMM-like ops and attention also have a row reference that computes only chosen rows
// of the output, so a test can check a large shape on a sample of rows:
//   gemm_tn, gemm_tn_fp8, gemm_tn_fp8_blockscaled, gemm_tn_int8, grouped_gemm_tn: rows of C
//     (0 <= row < M);
//   grouped_gemm_masked: rows of C flattened over [G, M] (g*M + r);
//   attention_fwd: rows of O flattened over [B, H, S] ((b*H + h)*S + s).
// Other rows of the output are left untouched.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "kiln/abi.h"

namespace kiln::zoo {

// nullptr for an op the table does not name.
kiln_reference_fn find_zoo_reference(std::string_view op);

using RowReferenceFn = int (*)(const kiln_tensor* tensors, int n_tensors,
                               const kiln_scalar* scalars, int n_scalars,
                               std::span<const int64_t> rows);
// nullptr for ops without row sampling (and unknown ops). Rows outside the output, or
// rows given twice, are KILN_ERR_BAD_ARGUMENT.
RowReferenceFn find_zoo_row_reference(std::string_view op);

// The ops that have a reference, in the README's order.
std::vector<std::string_view> zoo_reference_ops();

// The references one by one (what find_zoo_reference returns).
int reference_gemm_tn(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_gemm_tn_fp8(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_gemm_tn_fp8_blockscaled(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_gemm_tn_int8(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_grouped_gemm_tn(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_grouped_gemm_masked(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_reduce_sum(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_softmax(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_rmsnorm(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_layernorm(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_transpose(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_scan(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_topk(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_silu_mul(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_attention_fwd(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_swiglu(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_cross_entropy(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_rope(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_add_rmsnorm_fp8(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_attention_decode(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_moe_gating_topk(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_moe_permute(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_moe_unpermute(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_radix_histogram(const kiln_tensor*, int, const kiln_scalar*, int);
// Memory-bound entries (quantization, KV-cache write).
int reference_quant_fp8_group128(const kiln_tensor*, int, const kiln_scalar*, int);
int reference_kv_cache_append_rope(const kiln_tensor*, int, const kiln_scalar*, int);

int reference_gemm_tn_rows(const kiln_tensor*, int, const kiln_scalar*, int,
                           std::span<const int64_t> rows);
int reference_gemm_tn_fp8_rows(const kiln_tensor*, int, const kiln_scalar*, int,
                               std::span<const int64_t> rows);
int reference_gemm_tn_fp8_blockscaled_rows(const kiln_tensor*, int, const kiln_scalar*, int,
                                           std::span<const int64_t> rows);
int reference_gemm_tn_int8_rows(const kiln_tensor*, int, const kiln_scalar*, int,
                                std::span<const int64_t> rows);
int reference_grouped_gemm_tn_rows(const kiln_tensor*, int, const kiln_scalar*, int,
                                   std::span<const int64_t> rows);
int reference_grouped_gemm_masked_rows(const kiln_tensor*, int, const kiln_scalar*, int,
                                       std::span<const int64_t> rows);
int reference_attention_fwd_rows(const kiln_tensor*, int, const kiln_scalar*, int,
                                 std::span<const int64_t> rows);

}  // namespace kiln::zoo
