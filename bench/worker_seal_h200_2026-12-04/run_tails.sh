#!/usr/bin/env bash
# Device call (2026-12-04), after run.sh: forged_time_below_truth failed hidden_stream_work (a
# 336 us tail after a 12.7 ms GEMM) instead of candidate_process. Is that the new worker or the
# 4096^3 shape? The cheats three times with the new worker (.gpu/bin) and twice with the
# worker of 5055adc (.gpu/old: before the seal, the verifier's flush and the new polling), then
# an honest 4096x4096x4096 benchmark of the fp16_gemm starter with each; every job's tails and
# round trips.
set -uo pipefail
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
export KILN_TASKS_DIR=$PWD/tasks KILN_KB_DIR=$PWD/kb KILN_ABI_INCLUDE=$PWD/tasks/include
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $OUT/gpu.txt 2>&1
cheats() {  # $1 label, $2 worker
  KILN_WORKER_CACHE=$PWD/.gpu/cache KILN_SOURCE_DIR=$PWD KILN_WORKER_BIN=$2 \
    KILN_WORKER_RESULTS=$OUT/$1 timeout 120 .gpu/bin/kiln_worker_gpu_tests \
    --gtest_filter=WorkerGpu.EveryCheatIsRejectedByItsGate > $OUT/$1.txt 2>&1
  echo "$1 rc=$?"
  for c in forged_time_below_truth answers_before_done; do
    jq -r --arg l $1 --arg c $c '(.result // .) as $r | [$l, $c, $r.status,
      ([$r.gates[]? | select((.state // (if .passed then "passed" else "failed" end)) == "failed")
        | .name] | join(",")), ($r.workloads[0].timing_checks_us | tostring | .[0:400])] | join(" ")' \
      $OUT/$1/cheat-$c.json 2>/dev/null
  done
}
honest() {  # $1 label, $2 dir with kiln and kiln-worker
  args=$(jq -n --rawfile s tasks/fp16_gemm/starter.cu '{source: $s, task: "fp16_gemm", workloads: ["4096x4096x4096"]}')
  t0=$(date +%s)
  PATH=$2:$PATH timeout 150 $2/kiln --log-level warn call benchmark --json "$args" --structured \
    > $OUT/$1.json 2> $OUT/$1.log
  echo "$1 rc=$? $(( $(date +%s) - t0 )) s"
  jq -r '.. | objects | select(has("timing_checks_us")) | [.name, .passed, .time_us.median, (.timing_checks_us | tostring)] | map(tostring) | join(" ")' $OUT/$1.json 2>/dev/null | head -3
}
cheats new1 $PWD/.gpu/bin/kiln-worker
cheats old1 $PWD/.gpu/old/kiln-worker
honest honest_new1 $PWD/.gpu/bin
honest honest_old1 $PWD/.gpu/old
cheats new2 $PWD/.gpu/bin/kiln-worker
cheats old2 $PWD/.gpu/old/kiln-worker
honest honest_new2 $PWD/.gpu/bin
cheats new3 $PWD/.gpu/bin/kiln-worker
(cd $OUT && tar czf /tmp/all.tar.gz --exclude=all.tar.gz . && mv /tmp/all.tar.gz all.tar.gz)
exit 0
