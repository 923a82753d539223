#!/usr/bin/env bash
# Device call A (2026-12-03, thirteenth session): the two zoo entries awaiting the H200 (the zoo's
# GPU test on every test shape, cuBLAS interleaved), their tunables through kiln's own benchmark
# on the fp16_gemm workload each is for, and "best of the zoo" candidates (entries dispatched by
# M, bench/zoo_dispatch/make_dispatch.py) on all ten fp16_gemm workloads. One deadline for the
# whole call; each step gets what is left.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source bench/h200_2026-12-03_session13/scripts/common.sh

echo "== zoo entries awaiting the H200"; t0=$(date +%s)
KILN=none timeout 150 bench/zoo_new_entries_h200.sh .gpu/zb $OUT/zoo > $OUT/zoo_new.txt 2>&1
echo "rc=$? $(( $(date +%s) - t0 )) s"; grep -E "PASS|FAIL|OK \]" $OUT/zoo_new.txt | cut -c1-250 | head -30

echo "== dispatch candidates, all ten workloads"
for f in .gpu/disp/*.cu; do bench "$f" '[]'; done
echo "== gemv_decode_hbm variants at 16x4096x4096"
for f in .gpu/var/gemv_decode_hbm*.cu; do bench "$f" '["16x4096x4096"]'; done
echo "== gemm_skinny_splitk_cluster variants at 128x8192x8192"
for f in .gpu/var/gemm_skinny_splitk_cluster*.cu; do bench "$f" '["128x8192x8192"]'; done
exit 0
