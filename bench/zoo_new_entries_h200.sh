#!/usr/bin/env bash
# The H200 run for the zoo entries listed in kb/zoo/awaiting_h200.json (written and checked on
# the CPU simulator, not measured yet): the zoo's GPU test on just those entries, every test shape
# checked against the CPU reference and the last one timed (30 cold-L2 CUDA-event samples;
# cuBLAS interleaved for gemm_tn and gemm_tn_int8), one JSON line per measurement. Optionally (kiln on PATH) the
# zoo's fp16 GEMMs through kiln's own `benchmark` at the decode shape 16x4096x4096, where the
# GEMV entry competes with cuBLAS (bench/zoo_benchmark.sh).
#
#   bench/zoo_new_entries_h200.sh BUNDLE OUT_DIR
#
# BUNDLE holds kiln_zoo_gpu_test and zoo/ (the built zoo_<ID>.so), made on the development
# machine as tests/gpu/README.md says ("Running on the GPU machine"). Needs jq. Writes
#   OUT_DIR/zoo_results.jsonl     lines for kiln_zoo_record (one per entry: its last shape)
#   OUT_DIR/zoo_gpu_test.log      the test's output (PASS lines with max errors per output)
#   OUT_DIR/zoo_benchmark/        bench/zoo_benchmark.sh's files, when kiln is found
# Back on the development machine: kiln_zoo_record OUT_DIR/zoo_results.jsonl writes the numbers
# into each entry's meta.json and removes the entry from kb/zoo/awaiting_h200.json.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUNDLE OUT_DIR" >&2
  exit 2
fi
bundle=$(cd "$1" && pwd)
out=$2
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
: > "$out/zoo_results.jsonl"

ids=$(jq -r '.entries[]' "$src/kb/zoo/awaiting_h200.json")
if [[ -z $ids ]]; then
  echo "kb/zoo/awaiting_h200.json lists no entry: nothing to measure" >&2
  exit 0
fi
filter=""
for id in $ids; do filter+="ZooGpu/zoo_gpu.Correct/$id:"; done

status=0
KILN_ZOO_DIR="$src/kb/zoo" KILN_ZOO_LIB_DIR="$bundle/zoo" \
  KILN_ZOO_RESULTS="$out/zoo_results.jsonl" \
  "$bundle/kiln_zoo_gpu_test" --gtest_filter="${filter%:}" 2>&1 | tee "$out/zoo_gpu_test.log" \
  || status=$?
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv \
  > "$out/gpu.txt" 2>&1 || true

if command -v "${KILN:-kiln}" > /dev/null 2>&1; then
  "$src/bench/zoo_benchmark.sh" "$out/zoo_benchmark" 16x4096x4096 || status=$?
else
  echo "kiln not on PATH: skipping kiln's benchmark of the fp16 GEMMs at 16x4096x4096" >&2
fi
echo "measured: $(wc -l < "$out/zoo_results.jsonl") line(s) in $out/zoo_results.jsonl"
exit "$status"
