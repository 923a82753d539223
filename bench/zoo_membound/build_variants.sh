#!/usr/bin/env bash
# Builds the memory-bound entries' variants (bench/zoo_membound/variants/ID/vN_*.cu, each a
# whole replacement of kb/zoo/ID/kernel.cu) as the zoo's GPU test loads them: OUT/setN/zoo_ID.so,
# one folder per variant number, so one run of kiln_zoo_gpu_test per folder times every entry's
# variant N (set0 is the entries as they are). The nvcc command is the zoo's own
# (kb/zoo/CMakeLists.txt) for the arch the meta names, or the variant's first line
# `// variant-arch: sm_90a`. Prints, per set, the gtest filter of its entries.
#
#   bench/zoo_membound/build_variants.sh OUT_DIR
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$1
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
mkdir -p "$out"

gencode() {
  case $1 in
    sm_80) echo "-gencode arch=compute_80,code=sm_80 -gencode arch=compute_80,code=compute_80" ;;
    sm_90a) echo "-gencode arch=compute_90a,code=sm_90a" ;;
    *) echo "unknown arch $1" >&2; return 1 ;;
  esac
}

build() {  # ID SOURCE SET
  local id=$1 file=$2 set=$3 arch
  arch=$(jq -r .arch "$src/kb/zoo/$id/meta.json")
  if head -1 "$file" | grep -q '^// variant-arch: '; then arch=$(head -1 "$file" | sed 's#^// variant-arch: ##'); fi
  mkdir -p "$out/$set"
  # shellcheck disable=SC2046
  "$nvcc" -std=c++17 -O3 -Xcompiler -fPIC -shared -lineinfo $(gencode "$arch") \
    -I"$src/tasks/include" -I"$src/kb/zoo/$id" -cudart shared \
    -Xlinker -rpath -Xlinker /usr/local/cuda/lib64 -o "$out/$set/zoo_$id.so" "$file" &
}

n=0
for dir in "$src"/bench/zoo_membound/variants/*/; do
  id=$(basename "$dir")
  build "$id" "$src/kb/zoo/$id/kernel.cu" set0
  for file in "$dir"/v[0-9]*.cu; do
    [ -e "$file" ] || continue
    set=set$(basename "$file" | sed -E 's/^v([0-9]+).*/\1/')
    build "$id" "$file" "$set"
    echo "$set $id $(basename "$file")" >> "$out/variants.txt.tmp"
  done
  n=$((n + 1))
  (( n % 1 == 0 )) && wait
done
wait
sort -u "$out/variants.txt.tmp" > "$out/variants.txt"; rm -f "$out/variants.txt.tmp"
for set in "$out"/set*/; do
  s=$(basename "$set")
  filter=$(ls "$set" | sed -E 's/^zoo_(.*)\.so$/ZooGpu\/zoo_gpu.Correct\/\1/' | paste -sd: -)
  echo "$s $filter"
done | tee "$out/filters.txt"
