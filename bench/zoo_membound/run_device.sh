#!/usr/bin/env bash
# Device call: the memory-bound entries and their variants through the zoo's GPU test (every
# test shape against the CPU reference; the last one timed, 30 cold-L2 CUDA-event samples),
# one run per variant set built by build_variants.sh into .gpu/mb (set0, the entries as they
# are, first and again last). kv_cache_append_rope gets a larger last shape here (a 16K-token
# prefill, 134 MB) beside its current one (36 MB, where fixed costs dominate), through a copy of
# the zoo folder whose meta.json has it. Results: $OUT/setN.jsonl, $OUT/summary.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
START=$(date +%s)
left() { echo $(( 570 - $(date +%s) + START )); }
export LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $OUT/gpu.txt 2>&1
zoo=/tmp/zoo_mb; rm -rf $zoo; cp -r kb/zoo $zoo
jq '.test.shapes += [{"T":16384,"S":32768,"HK":8,"D":128}]' kb/zoo/kv_cache_append_rope/meta.json \
  > $zoo/kv_cache_append_rope/meta.json
run_set() {  # SET TAG
  local set=$1 tag=$2 filter
  filter=$(grep "^$set " .gpu/mb/filters.txt | cut -d' ' -f2)
  (( $(left) < 30 )) && { echo "skip $tag: $(left) s left"; return; }
  local t0; t0=$(date +%s)
  KILN_ZOO_DIR=$zoo KILN_ZOO_LIB_DIR=$PWD/.gpu/mb/$set KILN_ZOO_RESULTS=$OUT/$tag.jsonl \
    timeout $(( $(left) - 10 )) .gpu/zb/kiln_zoo_gpu_test --gtest_filter="$filter" > $OUT/$tag.log 2>&1
  echo "$tag rc=$? $(( $(date +%s) - t0 )) s: $(grep -c 'OK \]' $OUT/$tag.log) ok, $(grep -c 'FAILED \]' $OUT/$tag.log) failed"
}
run_set set0 set0
for s in $(cut -d' ' -f1 .gpu/mb/filters.txt | grep -v '^set0$'); do run_set $s $s; done
run_set set0 set0_again
for f in $OUT/set*.jsonl; do
  jq -r --arg t "$(basename $f .jsonl)" '[$t, .id, (.shape | tostring), .time_us, .gbps] | map(tostring) | join(" ")' $f
done | sort -k2,2 -k1,1 | tee $OUT/summary.txt
exit 0
