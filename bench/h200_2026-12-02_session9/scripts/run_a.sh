#!/usr/bin/env bash
# Device call A (2026-12-02, ninth session): worker GPU tests under the 1% event slack, the zoo GPU
# test for gemv_decode_mma and the two attention entries, and fp16_gemm's task check.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=$PWD/.gpu/bin:$PATH LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
export KILN_TASKS_DIR=$PWD/tasks KILN_KB_DIR=$PWD/kb KILN_ABI_INCLUDE=$PWD/tasks/include
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $OUT/gpu.txt
cat $OUT/gpu.txt
echo "== worker gpu tests"; t0=$(date +%s)
mkdir -p $OUT/results
KILN_WORKER_CACHE=.gpu/cache KILN_SOURCE_DIR=$PWD KILN_WORKER_BIN=.gpu/bin/kiln-worker \
  KILN_WORKER_RESULTS=/tmp/results timeout 200 kiln_worker_gpu_tests > /tmp/worker_gpu.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[ +(OK|FAILED|RUN) |tests from|cheat|FAIL" /tmp/worker_gpu.txt | grep -v "RUN" | head -40
# the timing evidence of every honest job: largest event excess and tail
for f in /tmp/results/*.json; do
  jq -r --arg f "$(basename $f .json)" '[.. | objects | select(has("timing_checks_us")) | .timing_checks_us] as $t
    | if ($t|length)>0 then "\($f): \($t|tostring)" else empty end' "$f" 2>/dev/null | cut -c1-300
done > $OUT/timing_checks.txt
head -c 3000 $OUT/timing_checks.txt
cp /tmp/worker_gpu.txt $OUT/worker_gpu.txt
echo "== zoo: the awaiting entries, then the fp16 GEMMs through kiln benchmark at 16x4096x4096"; t0=$(date +%s)
timeout 330 bench/zoo_new_entries_h200.sh .gpu/zb $OUT/zoo_new > /tmp/zoo_new.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[ +(OK|FAILED) |PASS|FAIL|measured:" /tmp/zoo_new.txt | cut -c1-220 | head -60
cat $OUT/zoo_new/zoo_benchmark/summary.md 2>/dev/null | head -40
echo "== zoo: attention entries re-measured (lse output)"; t0=$(date +%s)
KILN_ZOO_DIR=$PWD/kb/zoo KILN_ZOO_LIB_DIR=$PWD/.gpu/zb/zoo KILN_ZOO_RESULTS=$OUT/zoo_attention.jsonl \
  timeout 120 .gpu/zb/kiln_zoo_gpu_test --gtest_filter='ZooGpu/zoo_gpu.Correct/attention_flash_mma:ZooGpu/zoo_gpu.Correct/attention_hopper_wgmma' > /tmp/zoo_attn.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[ +(OK|FAILED) |PASS|FAIL" /tmp/zoo_attn.txt | cut -c1-200
cp /tmp/zoo_new.txt /tmp/zoo_attn.txt $OUT/ 2>/dev/null
exit 0
