#!/usr/bin/env bash
# Full fp16_gemm benchmark jobs run straight through kiln-worker, for three measurements at once
# (bench/RESULTS.md has the results):
#   - where a warm benchmark's wall time goes: each RESULT's `wall_time` (build, load, verify,
#     timing; inputs, CPU reference, calls, checks; the GPU time the calls kept busy);
#   - the cost of running the candidate in its own process: the same candidate (the task's
#     starter) through OLD_WORKER, a kiln-worker without the candidate host, when one is given;
#   - the baseline under sabotage: the cuBLAS baseline's medians in jobs whose candidate is a
#     saboteur (bench/saboteurs/) against those of the starter's job;
#   - the same for a fast candidate, the zoo's warp-specialized persistent GEMM (close to cuBLAS,
#     so the GPU is busy for the least time a serious candidate keeps it busy);
#   - what the task's GPU reference saves: the starter again on a copy of the task without
#     files.gpu_reference, so every check runs the CPU reference (KILN_BENCH_CPU_REFERENCE=0
#     leaves it out).
#
#   bench/worker_wall_time.sh OUT_DIR NEW_WORKER [OLD_WORKER]
#
# KILN_BENCH_SABOTEURS=0 leaves the saboteurs out.
# The starter's jobs run twice, the first filling the build cache, and the second (warm) is kept;
# a saboteur's once (only its baseline medians matter). Needs a
# GPU and the CUDA toolkit; writes OUT_DIR/NAME.json (each RESULT) and OUT_DIR/summary.txt.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 OUT_DIR NEW_WORKER [OLD_WORKER]" >&2
  exit 2
fi
out=$1
new=$2
old=${3:-}
src=$(cd "$(dirname "$0")/.." && pwd)
work=${KILN_BENCH_WORK:-/tmp/kiln-worker-wall-time}
mkdir -p "$out" "$work"

run_job() {  # NAME WORKER CANDIDATE PASSES [TASK_DIR]
  local name=$1 worker=$2 candidate=$3 passes=$4 task=${5:-$src/tasks/fp16_gemm}
  local dir=$work/jobs/$name
  mkdir -p "$dir"
  cat > "$dir/job.json" <<JOB
{"id": "bench-$name", "kind": "benchmark", "task_dir": "$task",
 "candidate": "$candidate", "build_dir": "$work/builds/$name", "workloads": [],
 "seed": $((RANDOM * 32768 + RANDOM)), "limits": {"job_seconds": 900}}
JOB
  local start end
  for pass in $passes; do
    start=$(date +%s.%N)
    "$worker" --job "$dir/job.json" --gpu 0 > "$dir/stdout.jsonl" 2> "$dir/stderr.log" || true
    end=$(date +%s.%N)
    echo "$name $pass wall_s=$(awk "BEGIN {printf \"%.2f\", $end - $start}")" | tee -a "$out/summary.txt"
  done
  tail -n 1 "$dir/stdout.jsonl" > "$out/$name.json"
}

run_job starter "$new" "$src/tasks/fp16_gemm/starter.cu" "cold warm"
run_job zoo-warp-specialized "$new" "$src/kb/zoo/gemm_warp_specialized_persistent/kernel.cu" \
  "cold warm"
if [[ ${KILN_BENCH_CPU_REFERENCE:-1} != 0 ]]; then
  cpu_task=$work/tasks/fp16_gemm
  rm -rf "$cpu_task"
  mkdir -p "$(dirname "$cpu_task")"
  cp -r "$src/tasks/fp16_gemm" "$cpu_task"
  sed -i '/"gpu_reference":/d' "$cpu_task/task.json"
  run_job starter-cpu-reference "$new" "$src/tasks/fp16_gemm/starter.cu" "cold warm" "$cpu_task"
fi
if [[ -n "$old" ]]; then
  run_job starter-old-worker "$old" "$src/tasks/fp16_gemm/starter.cu" "cold warm"
fi
for saboteur in "$src"/bench/saboteurs/*/; do
  [[ ${KILN_BENCH_SABOTEURS:-1} == 0 ]] && break
  run_job "saboteur-$(basename "$saboteur")" "$new" "$saboteur/kernel.cu" "cold"
done
