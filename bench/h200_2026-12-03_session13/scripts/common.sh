# Shared by run_a.sh, run_b.sh and run_c.sh (sourced, from the repository root): the deadline,
# the environment kiln needs on the GPU machine, and one benchmark call with its summary line.
set -uo pipefail
START=$(date +%s)
left() { echo $(( 570 - $(date +%s) + START )); }
export PATH=$PWD/.gpu/bin:$PATH LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
export KILN_TASKS_DIR=$PWD/tasks KILN_KB_DIR=$PWD/kb KILN_ABI_INCLUDE=$PWD/tasks/include
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $OUT/gpu.txt 2>&1

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

