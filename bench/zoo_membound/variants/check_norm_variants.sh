#!/bin/bash
# Every variant: the brief's three kiln-sim-run commands (first shape), then the same with --dims
# shapes that take the fast path (incl. the largest H at small T, and T > grid for the persistent ones).
# usage: check_norm_variants.sh [ID...]   (default: all four entries)
cd "$(git rev-parse --show-toplevel)"
declare -A DIMS
DIMS[layernorm_bf16]="T=6,H=1000 T=3,H=4104 T=2,H=8192 T=500,H=8192 T=1201,H=1000 T=3,H=8200"
DIMS[rmsnorm_bf16]="T=6,H=1000 T=3,H=4104 T=2,H=8192 T=500,H=8192 T=1201,H=1000 T=3,H=8200"
DIMS[softmax_online]="R=5,C=1001 R=3,C=5000 R=2,C=8192 R=400,C=8192 R=1201,C=1000 R=3,C=8196"
DIMS[add_rmsnorm_fp8_bf16]="T=3,H=2304 T=2,H=8192 T=500,H=8192 T=1000,H=1024 T=5,H=4096 T=3,H=8320"
for id in ${@:-layernorm_bf16 add_rmsnorm_fp8_bf16 softmax_online rmsnorm_bf16}; do
  args=(); for d in ${DIMS[$id]}; do args+=(--dims $d); done
  for v in bench/zoo_membound/variants/$id/v*.cu; do
    line="$(basename $v):"
    for mode in "" --racecheck --synccheck; do
      for set in first dims; do
        if [ $set = first ]; then extra=(); else extra=("${args[@]}"); fi
        r=$(/work/main/build/bin/kiln-sim-run --task zoo:$id --zoo-dir /work/main/kb/zoo --build-dir "${SIM_BUILD_DIR:-/tmp/mb_norm_sim}" --source $v $mode "${extra[@]}" 2>&1 | python3 -c 'import json,sys
r=json.load(sys.stdin)
print(("pass %s/%s"%(r["passed"],r["total"])) if "passed" in r else r.get("verdict", r.get("error")))' 2>&1 | tail -1)
        line="$line ${mode:-sim}/$set=$r"
      done
    done
    echo "$id/$line"
  done
done
