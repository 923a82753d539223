#!/usr/bin/env bash
# Device call (2026-12-04): the worker's GPU tests with the completion seal, the verifier's own
# L2 flush and the new polling (issue 12), and every benchmark workload's round trip with the
# seal's cost. Run from the repository root on the GPU machine with .gpu/ carried (bin: kiln,
# kiln-worker, kiln_worker_gpu_tests; lib; include/kiln/abi.h; cache: a KILN_WORKER_PREBUILD=1
# build cache). Everything under $OUT is packed into $OUT/all.tar.gz (the device returns few files).
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH=$PWD/.gpu/bin:$PATH LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
export KILN_TASKS_DIR=$PWD/tasks KILN_KB_DIR=$PWD/kb KILN_ABI_INCLUDE=$PWD/tasks/include
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $OUT/gpu.txt 2>&1
cat $OUT/gpu.txt

echo "== worker GPU tests"; t0=$(date +%s)
KILN_WORKER_CACHE=$PWD/.gpu/cache KILN_SOURCE_DIR=$PWD KILN_WORKER_BIN=$PWD/.gpu/bin/kiln-worker \
  KILN_WORKER_RESULTS=$OUT/results timeout ${GPU_TEST_TIMEOUT:-420} .gpu/bin/kiln_worker_gpu_tests \
  ${GPU_TEST_FILTER:+--gtest_filter=$GPU_TEST_FILTER} > $OUT/gpu_tests.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"
grep -E '^\[ +(OK|FAILED) +\]|Failure|must fail' $OUT/gpu_tests.txt | cut -c1-400 | head -40

echo "== round trips (us): job workload probe_overhead call_overhead seal excess allowed span passed"
for f in $OUT/results/*.json; do
  [ -s "$f" ] || continue
  jq -r --arg f "$(basename $f .json)" '
    [.. | objects | select(has("timing_checks_us")) | {w: (.name // .workload // "?"),
      r: .timing_checks_us.round_trip, t: (.time_us.median // null), ok: (.passed // null)}]
    | .[] | [$f, .w, .r.probe_overhead, .r.call_overhead, .r.seal, .r.excess, .r.allowed, .t, .ok]
    | map(tostring) | join(" ")' "$f" 2>/dev/null
done | tee $OUT/round_trips.txt
echo "== cheats: name status failed gates"
for f in $OUT/results/cheat-*.json; do
  [ -s "$f" ] || continue
  jq -r --arg f "$(basename $f .json)" '(.result // .) as $r | [$f, $r.status,
    ([$r.gates[]? | select((.state // (if .passed then "passed" else "failed" end)) == "failed")
      | .name] | join(","))] | join(" ")' "$f" 2>/dev/null
done | tee $OUT/cheats.txt
(cd $OUT && tar czf /tmp/all.tar.gz --exclude=all.tar.gz . && mv /tmp/all.tar.gz all.tar.gz)
exit 0
