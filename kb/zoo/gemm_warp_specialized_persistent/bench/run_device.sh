#!/bin/bash
# Runs the bench on the GPU machine: uses the carried build/zoo_bench/bench when it loads
# there, else rebuilds it. Output goes to stdout and $OUT/bench.log.
#   kb/zoo/gemm_warp_specialized_persistent/bench/run_device.sh [all|check|time]
set -o pipefail
cd "$(dirname "$0")/../../../.."
MODE=${1:-all}
OUTDIR=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && LD_LIBRARY_PATH="$d:$LD_LIBRARY_PATH"
done
export LD_LIBRARY_PATH
BENCH=build/zoo_bench/bench
if ! $BENCH probe; then
  echo "carried binary does not run here; rebuilding"
  kb/zoo/gemm_warp_specialized_persistent/bench/build.sh /tmp/zoo_bench > "$OUTDIR/build.log" 2>&1 || { tail -30 "$OUTDIR/build.log"; exit 1; }
  BENCH=/tmp/zoo_bench/bench
fi
cuobjdump -sass build/zoo_bench/e2.o 2>/dev/null | grep -cE "HGMMA" | sed 's/^/HGMMA instructions in e2.o: /'
$BENCH "$MODE" 2>&1 | tee "$OUTDIR/bench.log"
