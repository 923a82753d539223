#!/usr/bin/env bash
# The zoo's fp16 GEMMs through kiln's own `benchmark` (CUPTI, interleaved with cuBLAS, cold L2)
# on the zoo's measured shape, beside the number each entry's meta.json records from the zoo's
# GPU test (CUDA events): the agreement issue 18 asks for. Every kb/zoo entry of op gemm_tn with
# dtype f16 has fp16_gemm's signature, so its kernel.cu is a fp16_gemm candidate as it stands.
#
#   bench/zoo_benchmark.sh OUT_DIR [WORKLOAD]      (default workload 4096x4096x4096)
#
# Needs a GPU, kiln and kiln-worker on PATH (or KILN=path), jq, and the environment kiln needs
# to find its tasks when it is not run from a build tree (KILN_TASKS_DIR, KILN_ABI_INCLUDE).
# Writes OUT_DIR/ID.json (the tool's structuredContent) and OUT_DIR/summary.jsonl.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 OUT_DIR [WORKLOAD]" >&2
  exit 2
fi
out=$1
workload=${2:-4096x4096x4096}
kiln=${KILN:-kiln}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
: > "$out/summary.jsonl"

for meta in "$src"/kb/zoo/*/meta.json; do
  jq -e '.op == "gemm_tn" and (.dtypes | index("f16"))' "$meta" > /dev/null || continue
  id=$(jq -r .id "$meta")
  args=$(jq -n --rawfile s "$(dirname "$meta")/kernel.cu" --arg w "$workload" \
    '{source: $s, task: "fp16_gemm", workloads: [$w]}')
  start=$(date +%s.%N)
  "$kiln" --log-level warn call benchmark --json "$args" --structured > "$out/$id.json" \
    2> "$out/$id.log" || true
  end=$(date +%s.%N)
  if ! { [ -s "$out/$id.json" ] && jq -e 'type == "object"' "$out/$id.json" > /dev/null 2>&1; }; then
    jq -cn --arg id "$id" --arg e "$(cat "$out/$id.json" "$out/$id.log" | head -c 400)" \
      '{id: $id, status: "no_result", error: $e}' | tee -a "$out/summary.jsonl"
    continue
  fi
  # shape of the workload name MxNxK, for the meta.json measurement of the same shape
  jq -c --arg id "$id" --arg w "$workload" --slurpfile meta "$meta" \
    --arg wall "$(awk "BEGIN {printf \"%.1f\", $end - $start}")" '
    ($w | split("x") | map(tonumber)) as [$m, $n, $k]
    | ($meta[0].measured | map(select(.shape.M == $m and .shape.N == $n and .shape.K == $k))
       | last) as $z
    | (.workloads // [] | map(select(.name == $w)) | first) as $b
    | {id: $id, workload: $w, wall_s: ($wall | tonumber), status: .status,
       benchmark_us: $b.time_us.median, benchmark_cublas_us: $b.baseline_time_us.median,
       benchmark_event_us: $b.event_time_us.median, benchmark_speedup: $b.speedup,
       zoo_us: $z.time_us, zoo_cublas_us: $z.baseline_time_us, zoo_command: $z.command,
       zoo_over_benchmark: (if $z.time_us and $b.time_us.median
                            then $z.time_us / $b.time_us.median else null end)}' \
    "$out/$id.json" | tee -a "$out/summary.jsonl"
done
