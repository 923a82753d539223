#!/usr/bin/env bash
# Device call (2026-12-03, fourteenth session): the worker's GPU tests with the verifier's clock
# at its H200 margins (issue 12: every honest kernel passes, every cheat fails its named gate,
# forged_time_below_truth among them), the round trips of the starters' full benchmarks, and the
# zoo's GPU test on the ten memory-bound entries as adopted from bench/zoo_membound (issue 18).
# Everything under $OUT is also packed into $OUT/all.tar.gz (the device returns few files).
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$(date +%s)
left() { echo $(( 570 - $(date +%s) + START )); }
export PATH=$PWD/.gpu/bin:$PATH LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
export KILN_TASKS_DIR=$PWD/tasks KILN_KB_DIR=$PWD/kb KILN_ABI_INCLUDE=$PWD/tasks/include
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $OUT/gpu.txt 2>&1

echo "== zoo GPU test, memory-bound entries"; t0=$(date +%s)
filter=$(for id in add_rmsnorm_fp8_bf16 kv_cache_append_rope layernorm_bf16 moe_token_permute \
  quant_fp8_group128 rmsnorm_bf16 rope_halfsplit_bf16 silu_mul_elementwise softmax_online \
  transpose_smem; do echo -n "ZooGpu/zoo_gpu.Correct/$id:"; done)
KILN_ZOO_DIR=$PWD/kb/zoo KILN_ZOO_LIB_DIR=$PWD/.gpu/zb/zoo KILN_ZOO_RESULTS=$OUT/zoo_results.jsonl \
  timeout 200 .gpu/zb/kiln_zoo_gpu_test --gtest_filter="${filter%:}" > $OUT/zoo_gpu_test.log 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E "OK \]|FAILED" $OUT/zoo_gpu_test.log | head -12
jq -r '[.id, (.shape|tostring), .time_us, .gbps] | map(tostring) | join(" ")' $OUT/zoo_results.jsonl

echo "== worker GPU tests"; t0=$(date +%s)
KILN_WORKER_CACHE=$PWD/.gpu/cache KILN_SOURCE_DIR=$PWD KILN_WORKER_BIN=$PWD/.gpu/bin/kiln-worker \
  KILN_WORKER_RESULTS=$OUT/results timeout 300 .gpu/bin/kiln_worker_gpu_tests > $OUT/gpu_tests.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E '^\[ +(OK|FAILED) +\]|Failure|must fail' $OUT/gpu_tests.txt | cut -c1-300 | head -30

echo "== starters, full benchmarks"
for task in fp16_gemm rmsnorm; do
  (( $(left) < 40 )) && break
  t0=$(date +%s)
  args=$(jq -n --rawfile s tasks/$task/starter.cu --arg t $task '{source: $s, task: $t}')
  timeout $(( $(left) - 10 )) kiln --log-level warn call benchmark --json "$args" --structured \
    > $OUT/starter_$task.json 2> $OUT/starter_$task.log
  echo "$task rc=$? $(( $(date +%s) - t0 )) s $(jq -c '[.status, .summary.scored]' $OUT/starter_$task.json 2>/dev/null)"
done

echo "== round trips (us): job workload probe_overhead call_overhead excess allowed span passed"
for f in $OUT/results/*.json $OUT/starter_*.json; do
  [ -s "$f" ] || continue
  jq -r --arg f "$(basename $f .json)" '
    [.. | objects | select(has("timing_checks_us")) | {w: (.name // .workload // "?"),
      r: .timing_checks_us.round_trip, t: (.time_us.median // null), ok: (.passed // null)}]
    | .[] | [$f, .w, .r.probe_overhead, .r.call_overhead, .r.excess, .r.allowed, .t, .ok]
    | map(tostring) | join(" ")' "$f" 2>/dev/null
done | tee $OUT/round_trips.txt
(cd $OUT && tar czf /tmp/all.tar.gz --exclude=all.tar.gz . && mv /tmp/all.tar.gz all.tar.gz)
exit 0
