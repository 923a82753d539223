#!/bin/sh
# Builds bench (see bench.cu) from the two zoo GEMM entries; run from the repository root.
#   kb/zoo/gemm_warp_specialized_persistent/bench/build.sh [OUTDIR]
set -e
OUT=${1:-build/zoo_bench}
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
ZOO=kb/zoo
E2=$ZOO/gemm_warp_specialized_persistent/kernel.cu
FLAGS="-std=c++17 -O3 -lineinfo -Itasks/include -gencode arch=compute_90a,code=sm_90a"
mkdir -p "$OUT"
# build NAME SOURCE "EXTRA FLAGS": one object whose kiln_launch is renamed NAME_launch
build() {
  $NVCC $FLAGS -c "$2" -Dkiln_launch=$1_launch $3 -o "$OUT/$1.o"
}
build e1 $ZOO/gemm_wgmma_tma/kernel.cu ""
build e2 $E2 ""
build e2_checked $E2 "-DZOO_WAIT_TIMEOUT"
build e2_n256 $E2 "-DZOO_FORCE_BLOCK_N=256"
build e2_n128 $E2 "-DZOO_FORCE_BLOCK_N=128"
build e2_n128s2 $E2 "-DZOO_FORCE_BLOCK_N=128 -DZOO_FORCE_SPLITS=2"
build e2_n128s4 $E2 "-DZOO_FORCE_BLOCK_N=128 -DZOO_FORCE_SPLITS=4"
$NVCC $FLAGS $ZOO/gemm_warp_specialized_persistent/bench/bench.cu "$OUT"/e1.o "$OUT"/e2*.o \
  -lcublas -o "$OUT/bench"
echo "built $OUT/bench"
