#!/usr/bin/env bash
# Device call B (2026-12-03, thirteenth session): call A's script (run_a.sh) without the zoo's GPU
# test: a second grid of the two new entries' tunables through kiln's own benchmark, and the
# "best of the zoo" candidate with the best of call A's variants, on all ten fp16_gemm workloads. One deadline for the
# whole call; each step gets what is left.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source bench/h200_2026-12-03_session13/scripts/common.sh

echo "== dispatch candidates, all ten workloads"
for f in .gpu/disp/*.cu; do bench "$f" '[]'; done
echo "== gemv_decode_hbm variants at 16x4096x4096"
for f in .gpu/var/gemv_decode_hbm*.cu; do bench "$f" '["16x4096x4096"]'; done
echo "== gemm_skinny_splitk_cluster variants at 128x8192x8192"
for f in .gpu/var/gemm_skinny_splitk_cluster*.cu; do bench "$f" '["128x8192x8192"]'; done
exit 0
