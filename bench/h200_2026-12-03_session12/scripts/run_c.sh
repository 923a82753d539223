#!/usr/bin/env bash
# Device call C (2026-12-03, twelfth session): quant_fp8_group128 again after its loop bound
# became block-uniform (static synccheck could not prove the warp-uniform bound), every test shape
# checked and the last one timed.
set -uo pipefail
cd "$(dirname "$0")/../../.."
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
KILN_ZOO_DIR=$PWD/kb/zoo KILN_ZOO_LIB_DIR=$PWD/.gpu/zb/zoo KILN_ZOO_RESULTS=$OUT/zoo_results.jsonl \
  timeout 120 .gpu/zb/kiln_zoo_gpu_test --gtest_filter='ZooGpu/zoo_gpu.Correct/quant_fp8_group128' > $OUT/zoo_gpu_test.log 2>&1
echo "rc=$?"; grep -E "PASS|FAIL|timing" $OUT/zoo_gpu_test.log | cut -c1-250
