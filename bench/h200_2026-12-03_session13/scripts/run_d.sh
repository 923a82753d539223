#!/usr/bin/env bash
# Device call D (2026-12-03, thirteenth session): the H200's achievable HBM bandwidth
# (bench/hbm_bandwidth/hbm_bandwidth.cu), the yardstick of the memory-bound entries, then the
# zoo's GPU test on those entries and on gemm_int8_wgmma, whose cuBLAS baseline (cublasGemmEx,
# s8 in, s32 out) the test now times beside it.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source bench/h200_2026-12-03_session13/scripts/common.sh

echo "== HBM bandwidth"
timeout 120 .gpu/bin/hbm_bandwidth > $OUT/hbm_bandwidth.jsonl 2>&1; echo "rc=$?"; cat $OUT/hbm_bandwidth.jsonl

echo "== zoo GPU test"; t0=$(date +%s)
KILN_ZOO_DIR=$PWD/kb/zoo KILN_ZOO_LIB_DIR=$PWD/.gpu/zb/zoo KILN_ZOO_RESULTS=$OUT/zoo_results.jsonl \
  timeout $(( $(left) - 10 )) .gpu/zb/kiln_zoo_gpu_test --gtest_filter='ZooGpu/zoo_gpu.Correct/gemm_int8_wgmma:ZooGpu/zoo_gpu.Correct/add_rmsnorm_fp8_bf16:ZooGpu/zoo_gpu.Correct/cross_entropy_online:ZooGpu/zoo_gpu.Correct/histogram_radix_pass:ZooGpu/zoo_gpu.Correct/kv_cache_append_rope:ZooGpu/zoo_gpu.Correct/layernorm_bf16:ZooGpu/zoo_gpu.Correct/moe_token_permute:ZooGpu/zoo_gpu.Correct/moe_token_unpermute:ZooGpu/zoo_gpu.Correct/quant_fp8_group128:ZooGpu/zoo_gpu.Correct/reduce_two_pass:ZooGpu/zoo_gpu.Correct/reduce_warp_shuffle:ZooGpu/zoo_gpu.Correct/rmsnorm_bf16:ZooGpu/zoo_gpu.Correct/rope_halfsplit_bf16:ZooGpu/zoo_gpu.Correct/silu_mul_elementwise:ZooGpu/zoo_gpu.Correct/softmax_online:ZooGpu/zoo_gpu.Correct/swiglu_fused_bf16:ZooGpu/zoo_gpu.Correct/transpose_smem' > $OUT/zoo_gpu_test.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED|cuBLAS" $OUT/zoo_gpu_test.log | cut -c1-220 | head -40
exit 0
