#!/usr/bin/env bash
# Device call (2026-12-03, fourteenth session, issue 12): the verifier's clock against the
# host's reported times (judge_round_trip). The worker's GPU tests (every honest kernel and
# starter must pass, every cheat, forged_time_below_truth among them, must fail its named gate),
# the zoo's fp16 GEMMs through kiln's benchmark at 16x4096x4096 (honest kernels from 15 us to
# 1.1 ms), and full starter benchmarks; then every result's timing_checks_us.round_trip.
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$(date +%s)
left() { echo $(( 560 - $(date +%s) + START )); }
export PATH=$PWD/.gpu/bin:$PATH LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
export KILN_TASKS_DIR=$PWD/tasks KILN_KB_DIR=$PWD/kb KILN_ABI_INCLUDE=$PWD/tasks/include
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $OUT/gpu.txt 2>&1

echo "== worker GPU tests"; t0=$(date +%s)
KILN_WORKER_CACHE=$PWD/.gpu/cache KILN_SOURCE_DIR=$PWD KILN_WORKER_BIN=$PWD/.gpu/bin/kiln-worker \
  KILN_WORKER_RESULTS=$OUT/results timeout 300 .gpu/bin/kiln_worker_gpu_tests > $OUT/gpu_tests.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E '^\[ +(OK|FAILED) +\]|cheat|Failure' $OUT/gpu_tests.txt | cut -c1-300 | head -40

echo "== zoo fp16 GEMMs, 16x4096x4096"; t0=$(date +%s)
timeout $(( $(left) - 100 )) bench/zoo_benchmark.sh $OUT/zoo16 16x4096x4096 > /dev/null 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"

echo "== starters, full benchmarks"
for task in fp16_gemm rmsnorm; do
  (( $(left) < 40 )) && break
  t0=$(date +%s)
  args=$(jq -n --rawfile s tasks/$task/starter.cu --arg t $task '{source: $s, task: $t}')
  timeout $(( $(left) - 10 )) kiln --log-level warn call benchmark --json "$args" --structured \
    > $OUT/starter_$task.json 2> $OUT/starter_$task.log
  echo "$task rc=$? $(( $(date +%s) - t0 )) s"
done

echo "== round trips (us): probe overhead, call overhead, excess, allowed, median span"
for f in $OUT/results/*.json $OUT/zoo16/*.json $OUT/starter_*.json; do
  [ -s "$f" ] || continue
  jq -r --arg f "$(basename $f .json)" '
    [.. | objects | select(has("timing_checks_us")) | {w: (.name // .workload // "?"),
      r: .timing_checks_us.round_trip, t: (.time_us.median // null), ok: (.passed // null)}]
    | .[] | [$f, .w, .r.probe_overhead, .r.call_overhead, .r.excess, .r.allowed, .t, .ok]
    | map(tostring) | join(" ")' "$f" 2>/dev/null
done | tee $OUT/round_trips.txt
exit 0
