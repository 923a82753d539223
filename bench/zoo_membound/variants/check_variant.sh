#!/bin/bash
# usage: chk.sh ID V.cu [DIMS...]   (mb_elem helper's checker)
ID=$1; V=$2; shift 2; Z=/work/main/kb/zoo
T=/tmp/mb_elem_tools
ARCH=sm_80; head -1 $V | grep -q 'variant-arch: sm_90a' && ARCH=sm_90a
C=${ARCH/sm_/compute_}
/usr/local/cuda/bin/nvcc -std=c++17 -O3 -Xcompiler -fPIC -shared -lineinfo -gencode arch=$C,code=$ARCH \
  -I/work/main/tasks/include -I/work/wt/mb_elem/kb/zoo/$ID -cudart shared -Xptxas -v -o $T/x.so $V 2>&1 | grep -E "error|warning|registers|spill|Compiling" | sed -e 's/^/  ptxas: /' -e 's/Compiling entry function .\(.*\). for.*/\1/'
for D in default "$@"; do
DA=""; [ "$D" != default ] && DA="--dims $D"
echo "  dims: $D"
for m in "" --racecheck --synccheck; do
  /work/main/build/bin/kiln-sim-run --task zoo:$ID --zoo-dir $Z --source $V $m $DA --build-dir $T/build > $T/sim.json 2>&1
  python3 - "$m" $T/sim.json <<'PY'
import json,sys
m=sys.argv[1] or "plain"
try: d=json.load(open(sys.argv[2]))
except Exception as e: print("  ",m,"NOT JSON:",open(sys.argv[2]).read()[-800:]); sys.exit()
ws=set()
def walk(x):
  if isinstance(x,dict):
    if "workload" in x and "status" in x: ws.add((x["workload"],x["status"]))
    for v in x.values(): walk(v)
  elif isinstance(x,list):
    for v in x: walk(v)
walk(d)
print("  %-12s ok=%s verdict=%s findings=%d workloads=%s"%(m,d.get("ok"),d.get("verdict","-"),len(d.get("findings",[])),sorted(ws)))
if d.get("findings"): print("   ",json.dumps(d["findings"])[:1500])
if not d.get("ok"): print("   ",json.dumps(d)[:2500])
PY
done
done
