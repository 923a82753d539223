#!/usr/bin/env bash
# Device call A (2026-12-03, twelfth session): grouped_gemm_fp8's task check under the near-miss
# bound, the four zoo entries awaiting the H200, gemm_tma_store_epilogue's TMA path after the
# plain-store fallback was added, kiln's benchmark through a real Slurm (cgroup.conf on cgroup
# v2), the worker GPU tests. One deadline for the whole call; each step gets what is left.
set -uo pipefail
cd "$(dirname "$0")/../../.."
START=$(date +%s)
left() { echo $(( 575 - $(date +%s) + START )); }
export PATH=$PWD/.gpu/bin:$PATH LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
export KILN_TASKS_DIR=$PWD/tasks KILN_KB_DIR=$PWD/kb KILN_ABI_INCLUDE=$PWD/tasks/include
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $OUT/gpu.txt 2>&1

echo "== grouped_gemm_fp8 task check"; t0=$(date +%s)
timeout 160 kiln task check grouped_gemm_fp8 --require-gpu --repeats 2 --work-dir /tmp/tc --report-dir /tmp/tcr > $OUT/task_check_grouped_gemm_fp8.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E "passed|FAILED|FLAGGED|not run|total|freeze|refused" $OUT/task_check_grouped_gemm_fp8.txt | cut -c1-220 | head -40
cp /tmp/tcr/report.json $OUT/task_check_grouped_report.json 2>/dev/null

echo "== zoo entries awaiting the H200"; t0=$(date +%s)
KILN=none timeout 150 bench/zoo_new_entries_h200.sh .gpu/zb $OUT/zoo > /tmp/zoo.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E "PASS|FAIL|timing|measured" /tmp/zoo.txt | cut -c1-250 | head -30

echo "== gemm_tma_store_epilogue (TMA path, correctness only)"; t0=$(date +%s)
KILN_ZOO_DIR=$PWD/kb/zoo KILN_ZOO_LIB_DIR=$PWD/.gpu/zb/zoo KILN_ZOO_NO_TIMING=1 \
  timeout 60 .gpu/zb/kiln_zoo_gpu_test --gtest_filter='ZooGpu/zoo_gpu.Correct/gemm_tma_store_epilogue' > $OUT/zoo_tma_store.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E "PASS|FAIL|OK \]" $OUT/zoo_tma_store.txt | cut -c1-200 | head

echo "== slurm"; t0=$(date +%s); l=$(( $(left) - 120 )); (( l > 150 )) && l=150
if (( l > 60 )); then
  KILN_SLURM_GPU_SECONDS=$(( l - 10 )) timeout $l bash bench/slurm_gpu.sh .gpu/slurm $OUT/slurm_gpu > $OUT/slurm_gpu.txt 2>&1
  echo "rc=$? $(( $(date +%s) - t0 )) s (limit $l)"; tail -20 $OUT/slurm_gpu.txt
else echo "skipped: $l s left"; fi

echo "== worker gpu tests"; t0=$(date +%s); l=$(left)
KILN_WORKER_CACHE=$PWD/.gpu/cache KILN_SOURCE_DIR=$PWD KILN_WORKER_BIN=$PWD/.gpu/bin/kiln-worker \
  timeout $l kiln_worker_gpu_tests > $OUT/worker_gpu.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s (limit $l)"; grep -E "^\[ +(OK|FAILED) " $OUT/worker_gpu.txt | cut -c1-160
exit 0
