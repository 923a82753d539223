#!/usr/bin/env bash
# tasks/grouped_gemm_fp8 on an H200 (issue 17): what cuBLASLt supports for the baseline, then the
# starter through kiln's own benchmark, which also measures the cuBLASLt baseline interleaved and
# checks both against the exact reference.
#
#   bench/grouped_gemm_fp8_h200.sh OUT_DIR [WORKLOAD...]     (default: all four workloads)
#
# Needs a GPU, nvcc and cuBLASLt (CUDA 13), kiln and kiln-worker on PATH (or KILN=path), jq, and
# the environment kiln needs to find its tasks when it is not run from a build tree
# (KILN_TASKS_DIR, KILN_ABI_INCLUDE). Writes
#   OUT_DIR/probe.txt           the probe: heuristics per group shape and scale-mode pair, and the
#                               scale layout cuBLASLt reads (bench/grouped_gemm_fp8_probe.cu)
#   OUT_DIR/baseline_check.txt  baseline.cu alone: status, ms per call, errors on sampled rows
#   OUT_DIR/benchmark.json      the benchmark tool's structuredContent for the starter
#   OUT_DIR/summary.jsonl       per workload: pass, starter and baseline times, the baseline's
#                               TFLOP/s and its errors against the exact reference
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 OUT_DIR [WORKLOAD...]" >&2
  exit 2
fi
out=$1
shift
kiln=${KILN:-kiln}
src=$(cd "$(dirname "$0")/.." && pwd)
cuda=${CUDA_HOME:-/usr/local/cuda}
mkdir -p "$out"

echo "== probe" >&2
"$cuda/bin/nvcc" -std=c++17 -O2 -arch=sm_90a -I"$src/tasks/include" \
  "$src/bench/grouped_gemm_fp8_probe.cu" -L"$cuda/lib64" -lcublasLt -o "$out/probe"
"$out/probe" | tee "$out/probe.txt"

echo "== the baseline alone against a double-precision sum, every workload" >&2
"$cuda/bin/nvcc" -std=c++17 -O2 -arch=sm_90a -I"$src/tasks/grouped_gemm_fp8" -I"$src/tasks/include" \
  "$src/bench/grouped_gemm_fp8_baseline_check.cu" -L"$cuda/lib64" -lcublasLt -o "$out/check"
for w in "4 8192 6144 7168 2" "4 8192 4096 4096 3" "8 4096 7168 3072 6" "8 4096 4096 2048 11"; do
  echo "G M N K S = $w" | tee -a "$out/baseline_check.txt"
  # shellcheck disable=SC2086
  "$out/check" $w | tee -a "$out/baseline_check.txt" || true
done

echo "== benchmark of the starter (with the cuBLASLt baseline interleaved)" >&2
if [[ $# -gt 0 ]]; then
  workloads=$(printf '%s\n' "$@" | jq -R . | jq -s .)
else
  workloads=null
fi
args=$(jq -n --rawfile s "$src/tasks/grouped_gemm_fp8/starter.cu" --argjson w "$workloads" \
  '{source: $s, task: "grouped_gemm_fp8"} + (if $w then {workloads: $w} else {} end)')
start=$(date +%s.%N)
"$kiln" --log-level warn call benchmark --json "$args" --structured > "$out/benchmark.json" \
  2> "$out/benchmark.log" || true
end=$(date +%s.%N)
echo "benchmark wall: $(awk "BEGIN {printf \"%.1f\", $end - $start}") s" | tee "$out/wall.txt"
jq -c '.workloads[]? | {name, passed, failure,
        starter_us: .time_us.median, baseline_us: .baseline_time_us.median, speedup,
        throughput, baseline_errors: .extra.baseline_errors,
        gpu_reference_anchor: .extra.gpu_reference_anchor, errors}' \
  "$out/benchmark.json" | tee "$out/summary.jsonl"
jq -c '{status, error, gates: [.gates[]? | select(.state != "passed") | {name, state, detail}]}' \
  "$out/benchmark.json" || cat "$out/benchmark.log"
