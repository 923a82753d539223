#!/usr/bin/env bash
# Device call C (2026-12-03, thirteenth session): call A's steps again with the two new entries'
# defaults set from calls A and B (gemv_decode_hbm: kTiles 2, kInFlightTarget 4 MiB;
# gemm_skinny_splitk_cluster: 128-wide tiles): the zoo's GPU test on both (the numbers recorded
# in meta.json), the "best of the zoo" candidate twice on all ten workloads, a last tunable grid. One deadline for the
# whole call; each step gets what is left.
set -uo pipefail
cd "$(dirname "$0")/../../.."
START=$(date +%s)
left() { echo $(( 570 - $(date +%s) + START )); }
export PATH=$PWD/.gpu/bin:$PATH LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
export KILN_TASKS_DIR=$PWD/tasks KILN_KB_DIR=$PWD/kb KILN_ABI_INCLUDE=$PWD/tasks/include
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $OUT/gpu.txt 2>&1

echo "== zoo entries awaiting the H200"; t0=$(date +%s)
KILN=none timeout 150 bench/zoo_new_entries_h200.sh .gpu/zb $OUT/zoo > $OUT/zoo_new.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E "PASS|FAIL|OK \]" $OUT/zoo_new.txt | cut -c1-250 | head -30

# One kiln benchmark of FILE on WORKLOADS (a JSON list); one summary line per workload.
bench() {
  local file=$1 workloads=$2 name; name=$(basename "$file" .cu)
  (( $(left) < 25 )) && { echo "skip $name: $(left) s left"; return; }
  local t0; t0=$(date +%s)
  jq -n --rawfile s "$file" --argjson w "$workloads" \
    '{source: $s, task: "fp16_gemm"} + (if $w == [] then {} else {workloads: $w} end)' > /tmp/args.json
  timeout $(( $(left) - 5 )) kiln --log-level warn call benchmark --json "$(cat /tmp/args.json)" --structured \
    > /tmp/b.json 2> /tmp/b.log
  jq -c --arg n "$name" --arg s "$(( $(date +%s) - t0 ))" '
    {name: $n, wall_s: ($s | tonumber), status: .status, geomean: .summary.geomean_speedup,
     scored: .summary.scored,
     workloads: [.workloads[]? | {w: .name, ok: .passed, us: .time_us.median,
                 cublas_us: .baseline_time_us.median, x: .speedup}]}' /tmp/b.json >> $OUT/bench.jsonl 2>/dev/null \
    || echo "{\"name\": \"$name\", \"error\": $(head -c 300 /tmp/b.json /tmp/b.log | jq -Rs .)}" >> $OUT/bench.jsonl
  tail -1 $OUT/bench.jsonl | cut -c1-400
}

echo "== dispatch candidates, all ten workloads"
for f in .gpu/disp/*.cu; do bench "$f" '[]'; bench "$f" '[]'; done
echo "== gemv_decode_hbm variants at 16x4096x4096"
for f in .gpu/var/gemv_decode_hbm*.cu; do bench "$f" '["16x4096x4096"]'; done
echo "== gemm_skinny_splitk_cluster variants at 128x8192x8192"
for f in .gpu/var/gemm_skinny_splitk_cluster*.cu; do bench "$f" '["128x8192x8192"]'; done
exit 0
