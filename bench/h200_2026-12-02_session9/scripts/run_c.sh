#!/usr/bin/env bash
# Device call C (2026-12-02, ninth session): kiln's benchmark through a real Slurm on the GPU,
# the grouped_gemm_fp8 worker test under its new tolerance, fp16_gemm's task check whole.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH=$PWD/.gpu/bin:$PATH LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
export KILN_TASKS_DIR=$PWD/tasks KILN_KB_DIR=$PWD/kb KILN_ABI_INCLUDE=$PWD/tasks/include
echo "== slurm"; t0=$(date +%s)
timeout 260 bash bench/slurm_gpu.sh .gpu/slurm /tmp/slurm_out > /tmp/slurm.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; tail -25 /tmp/slurm.txt
cp /tmp/slurm.txt $OUT/slurm_gpu.txt; cp /tmp/slurm_out/summary.txt $OUT/slurm_summary.txt 2>/dev/null
cp /tmp/slurm_out/slurm_job.txt $OUT/slurm_job.txt 2>/dev/null; cp /tmp/slurm_out/benchmark.txt $OUT/slurm_benchmark.txt 2>/dev/null
echo "== grouped_gemm_fp8 worker test"; t0=$(date +%s)
KILN_WORKER_CACHE=$PWD/.gpu/cache KILN_SOURCE_DIR=$PWD KILN_WORKER_BIN=$PWD/.gpu/bin/kiln-worker \
  timeout 90 kiln_worker_gpu_tests --gtest_filter='*GroupedGemmFp8*' > $OUT/worker_grouped.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E "^\[ +(OK|FAILED) |Failure|mismatches" $OUT/worker_grouped.txt | cut -c1-300 | head
echo "== fp16_gemm task check"; t0=$(date +%s)
timeout 150 kiln task check fp16_gemm --require-gpu --repeats 2 --work-dir /tmp/tc --report-dir /tmp/tcr > $OUT/task_check_fp16_gemm.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E "passed|FAILED|not run|total|freeze" $OUT/task_check_fp16_gemm.txt | cut -c1-200
exit 0
