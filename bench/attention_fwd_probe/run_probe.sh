#!/usr/bin/env bash
# Builds and runs probe.cpp on a GPU machine (from the repository root):
#   bench/attention_fwd_probe/run_probe.sh OUT_DIR
# Writes OUT_DIR/probe.jsonl (one line per workload and kernel) and OUT_DIR/gpu.txt.
set -euo pipefail
out=$1
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d)
mkdir -p "$out"
inc=-Itasks/include
so() {  # NAME SOURCE ARCH
  "$cuda/bin/nvcc" -std=c++17 -O3 -shared -Xcompiler -fPIC -cudart shared \
    -gencode "arch=compute_$3,code=sm_$3" $inc -o "$work/$1.so" "$2"
}
so gpu_reference tasks/attention_fwd/gpu_reference.cu 90a &
so baseline tasks/attention_fwd/baseline.cu 90a &
so starter tasks/attention_fwd/starter.cu 90a &
so attention_flash_mma kb/zoo/attention_flash_mma/kernel.cu 90a &
g++ -std=c++20 -O3 -ffp-contract=off -fPIC -shared -pthread $inc -o "$work/reference.so" \
  tasks/attention_fwd/reference.cpp &
"$cuda/bin/nvcc" -std=c++17 -O2 -cudart shared $inc -o "$work/probe" \
  bench/attention_fwd_probe/probe.cpp -ldl &
wait
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv; \
  "$cuda/bin/nvcc" --version | tail -2; ls "$cuda/lib64" | grep -i cudnn | head -3 || true; \
  ls /usr/lib/x86_64-linux-gnu | grep -i cudnn | head -3 || true; } > "$out/gpu.txt" 2>&1
"$work/probe" "$work/reference.so" "$work/gpu_reference.so" baseline="$work/baseline.so" \
  starter="$work/starter.so" attention_flash_mma="$work/attention_flash_mma.so" \
  | tee "$out/probe.jsonl"
