#!/usr/bin/env bash
# Device call B (2026-12-02, ninth session): worker GPU tests (1% event slack), the retuned
# gemv_decode_mma, fp16_gemm's task check, the attention_fwd starter's benchmark.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=$PWD/.gpu/bin:$PATH LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
export KILN_TASKS_DIR=$PWD/tasks KILN_KB_DIR=$PWD/kb KILN_ABI_INCLUDE=$PWD/tasks/include
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $OUT/gpu.txt
echo "== worker gpu tests"; t0=$(date +%s)
KILN_WORKER_CACHE=$PWD/.gpu/cache KILN_SOURCE_DIR=$PWD KILN_WORKER_BIN=$PWD/.gpu/bin/kiln-worker \
  KILN_WORKER_RESULTS=/tmp/results timeout 170 kiln_worker_gpu_tests > $OUT/worker_gpu.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[ +(OK|FAILED) " $OUT/worker_gpu.txt
grep -E "cheat-.*must fail|failed gates" $OUT/worker_gpu.txt | head -10
for f in /tmp/results/*.json; do
  jq -c --arg f "$(basename $f .json)" '[.. | objects | select(has("timing_checks_us")) | .timing_checks_us] as $t
    | if ($t|length)>0 then {f: $f, t: $t} else empty end' "$f" 2>/dev/null
done > /tmp/timing_checks.jsonl
echo "timing checks (max over jobs):"; jq -s -c '[.[].t[]] | {n: length, sample: .[0]}' /tmp/timing_checks.jsonl | cut -c1-600
echo "== zoo gemv_decode_mma"; t0=$(date +%s)
KILN_ZOO_DIR=$PWD/kb/zoo KILN_ZOO_LIB_DIR=$PWD/.gpu/zb/zoo KILN_ZOO_RESULTS=$OUT/zoo_gemv.jsonl \
  timeout 60 .gpu/zb/kiln_zoo_gpu_test --gtest_filter='ZooGpu/zoo_gpu.Correct/gemv_decode_mma' 2>&1 | grep -E "timing|PASS|FAIL" | cut -c1-250
echo "== fp16_gemm task check"; t0=$(date +%s)
timeout 200 kiln task check fp16_gemm --require-gpu --repeats 2 --work-dir /tmp/tc --report-dir /tmp/tcr > $OUT/task_check_fp16_gemm.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; tail -30 $OUT/task_check_fp16_gemm.txt; cp /tmp/tcr/report.json $OUT/task_check_report.json 2>/dev/null
echo "== attention_fwd starter"; t0=$(date +%s)
left=$(( 560 - $(date +%s) + START ))
timeout $left bench/attention_fwd_h200.sh /tmp/attn starter > /tmp/attn.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s (limit $left)"; cat /tmp/attn.txt | tail -20
cp /tmp/attn/starter.json $OUT/attention_starter.json 2>/dev/null; cp /tmp/attn/summary.md $OUT/attention_summary.md 2>/dev/null
exit 0
