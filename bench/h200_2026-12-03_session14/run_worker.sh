#!/usr/bin/env bash
# Device call (2026-12-03, fourteenth session), after run_final.sh: the worker's GPU tests again
# with the round-trip allowance widened to 4 ms + 10% (issue 12), and their round trips.
# Everything under $OUT is also packed into $OUT/all.tar.gz (the device returns few files).
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$(date +%s)
left() { echo $(( 570 - $(date +%s) + START )); }
export PATH=$PWD/.gpu/bin:$PATH LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
export KILN_TASKS_DIR=$PWD/tasks KILN_KB_DIR=$PWD/kb KILN_ABI_INCLUDE=$PWD/tasks/include
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $OUT/gpu.txt 2>&1

echo "== worker GPU tests"; t0=$(date +%s)
KILN_WORKER_CACHE=$PWD/.gpu/cache KILN_SOURCE_DIR=$PWD KILN_WORKER_BIN=$PWD/.gpu/bin/kiln-worker \
  KILN_WORKER_RESULTS=$OUT/results timeout 300 .gpu/bin/kiln_worker_gpu_tests > $OUT/gpu_tests.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E '^\[ +(OK|FAILED) +\]|Failure|must fail' $OUT/gpu_tests.txt | cut -c1-300 | head -30

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
