#!/bin/bash
# kiln's GPU jobs through a real Slurm on a real GPU (issue 19): on the GPU machine (Ubuntu 24.04,
# root, no Slurm), install the Slurm and munge of scripts/bundle_slurm_for_gpu.sh's bundle, start
# a single-node cluster on loopback whose node has the GPU as the gres `gpu`
# (scripts/slurm_test_cluster.sh with KILN_SLURM_GPUS=1: GresTypes=gpu, gres.conf
# File=/dev/nvidia0), start `kiln runner --slurm --gres gpu:1` with the real kiln-worker, and run
# one `kiln call benchmark` of the rmsnorm starter through it: an MCP tool call whose job is a
# Slurm job on the allocated GPU.
#
#   bench/slurm_gpu.sh [--no-gpu] [--simulated] [BUNDLE [OUT_DIR]]
#
# BUNDLE: default .gpu/slurm. OUT_DIR: default $OUT/slurm_gpu, else /tmp/kiln-slurm-gpu/out.
# Programs: KILN_BIN_DIR (default .gpu/bin: kiln, kiln-worker), their libraries in .gpu/lib
# (put first on LD_LIBRARY_PATH). Every step has a deadline inside one total limit,
# KILN_SLURM_GPU_SECONDS (default 240); a step that fails says which and what its logs say.
# For a machine without a GPU (this script's own test on the development machine):
#   --no-gpu     the node has no gres and jobs ask for none (--gres none)
#   --simulated  the worker is kiln-worker-sim (KILN_WORKER, default KILN_BIN_DIR/kiln-worker-sim)
#                behind --simulated-worker; the benchmark must come back as its refusal
# KILN_SLURM_GPU_DEVICE=PREFIX names the gres device files PREFIX0.. (a mknod'ed stand-in).
# Prints the result summary on stdout; writes OUT_DIR/benchmark.txt (the tool's text),
# OUT_DIR/slurm_job.txt (scontrol show job), OUT_DIR/summary.txt, and the logs (runner.log,
# slurmctld.log, slurmd.log, the job folder's slurm.out and worker.log).
set -euo pipefail

gpu=1 simulated=0
while [[ ${1:-} == --* ]]; do
  case $1 in
    --no-gpu) gpu=0 ;;
    --simulated) simulated=1 ;;
    *) echo "unknown flag $1; usage: $0 [--no-gpu] [--simulated] [BUNDLE [OUT_DIR]]" >&2; exit 2 ;;
  esac
  shift
done
src=$(cd "$(dirname "$0")/.." && pwd)
bundle=${1:-$src/.gpu/slurm}
out=${2:-${OUT:+$OUT/slurm_gpu}}
out=${out:-/tmp/kiln-slurm-gpu/out}
bin_dir=${KILN_BIN_DIR:-$src/.gpu/bin}
work=${KILN_SLURM_GPU_WORK:-/tmp/kiln-slurm-gpu/work}
limit=${KILN_SLURM_GPU_SECONDS:-240}
deadline=$((SECONDS + limit))
mkdir -p "$out"
: >"$out/summary.txt"

say() { echo "slurm_gpu: $*" | tee -a "$out/summary.txt"; }
fail() {
  say "FAILED: $*"
  exit 1
}
left() {  # seconds left of the total limit (at least 1, so an expired limit stops the step at once)
  local n=$((deadline - SECONDS))
  echo $((n > 0 ? n : 1))
}

runner_pid=""
cleanup() {
  local code=$?
  [[ -n $runner_pid ]] && kill "$runner_pid" 2>/dev/null || true
  "$src/scripts/slurm_test_cluster.sh" stop "$work/slurm" >/dev/null 2>&1 || true
  for log in slurmctld.log slurmd.log munged.log; do
    [[ -f $work/slurm/$log ]] && cp "$work/slurm/$log" "$out/" 2>/dev/null || true
  done
  exit "$code"
}
trap cleanup EXIT

[[ $(id -u) == 0 ]] || fail "run as root: the single-node cluster's daemons run as root"
kiln=$bin_dir/kiln
if [[ $simulated == 1 ]]; then worker=${KILN_WORKER:-$bin_dir/kiln-worker-sim}; else worker=$bin_dir/kiln-worker; fi
[[ -x $kiln ]] || fail "$kiln is missing: carry the stripped kiln in .gpu/bin (or set KILN_BIN_DIR)"
[[ -x $worker ]] || fail "$worker is missing: carry kiln-worker in .gpu/bin (or set KILN_WORKER)"
if [[ $gpu == 1 && -z ${KILN_SLURM_GPU_DEVICE:-} && ! -e /dev/nvidia0 ]]; then
  fail "/dev/nvidia0 is missing: run on the GPU machine, or pass --no-gpu"
fi
export LD_LIBRARY_PATH=$src/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export KILN_TASKS_DIR=${KILN_TASKS_DIR:-$src/tasks} KILN_KB_DIR=${KILN_KB_DIR:-$src/kb}
export KILN_ABI_INCLUDE=${KILN_ABI_INCLUDE:-$src/tasks/include}
export KILN_CACHE_DIR=$work/kiln-cache

# 1. Slurm and munge at the paths they were built for; a file already there must be the same.
[[ -d $bundle/root && -d $bundle/lib ]] || fail "$bundle is not a bundle: make it with scripts/bundle_slurm_for_gpu.sh and carry it"
installed=0
while IFS= read -r -d '' file; do
  target=${file#"$bundle"/root}
  if [[ -e $target ]]; then
    cmp -s "$file" "$target" || fail "$target exists and differs from the bundle's: another Slurm or munge is installed here; remove it or use a machine without one"
  else
    mkdir -p "$(dirname "$target")"
    cp "$file" "$target"
    installed=$((installed + 1))
  fi
done < <(find "$bundle/root" -type f -print0)
added=()
for lib in "$bundle"/lib/*; do
  soname=$(basename "$lib")
  if [[ ! -e /usr/lib/x86_64-linux-gnu/$soname && ! -e /lib/x86_64-linux-gnu/$soname ]] &&
    ! ldconfig -p | grep -q "^[[:space:]]*$soname "; then
    cp "$lib" /usr/lib/x86_64-linux-gnu/
    added+=("$soname")
  fi
done
ldconfig
unresolved=$(for file in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/slurmstepd /usr/sbin/munged \
  /usr/bin/sbatch /usr/lib/x86_64-linux-gnu/slurm-wlm/*.so; do
  ldd "$file" 2>/dev/null | grep "not found" || true
done | sort -u | tr '\n' ' ')
[[ -z $unresolved ]] || fail "libraries still missing after the install: $unresolved"
say "installed $installed Slurm/munge files and ${#added[@]} libraries (${added[*]:-none}); $(/usr/sbin/slurmctld -V)"

# 2. The cluster: munged, slurmctld, slurmd on loopback; the node idle with its GPU.
rm -rf "$work"
mkdir -p "$work"
KILN_SLURM_GPUS=$gpu timeout "$(left)" "$src/scripts/slurm_test_cluster.sh" start "$work/slurm" \
  >"$out/cluster.log" 2>&1 || {
  code=$?
  cat "$out/cluster.log" >&2
  [[ $code == 124 ]] && fail "the cluster did not start within the ${limit} s limit (cluster.log, slurmctld.log, slurmd.log)"
  fail "the cluster did not start (cluster.log, slurmctld.log, slurmd.log)"
}
export SLURM_CONF=$work/slurm/slurm.conf
node=$(sinfo -h -N -o '%N %T %G')
say "node: $node"
if [[ $gpu == 1 && $node != *gpu:1* ]]; then fail "the node has no gpu gres (sinfo: $node); see slurmd.log"; fi

# 3. The runner: every job a Slurm job with one GPU.
runner_args=(--log-level info runner --slurm --partition kiln --listen 127.0.0.1:0 --worker "$worker"
  --cache-dir "$work/runner-cache" --queue-seconds 60 --job-seconds 150 --time-limit 180)
if [[ $gpu == 1 ]]; then runner_args+=(--gres gpu:1); else runner_args+=(--gres none); fi
[[ $simulated == 1 ]] && runner_args+=(--simulated-worker)
"$kiln" "${runner_args[@]}" 2>"$out/runner.log" &
runner_pid=$!
url=""
for _ in $(seq 100); do
  url=$(grep -o 'runner listening on http://127\.0\.0\.1:[0-9]*' "$out/runner.log" | awk '{print $4}' || true)
  [[ -n $url ]] && break
  kill -0 "$runner_pid" 2>/dev/null || { cat "$out/runner.log" >&2; fail "kiln runner exited (runner.log)"; }
  sleep 0.2
done
[[ -n $url ]] || fail "kiln runner did not listen within 20 s (runner.log)"
say "runner: $url (${runner_args[*]:2})"

# 4. One MCP tool call, as an agent makes it: benchmark the rmsnorm starter.
args=$(python3 -c 'import json, sys; print(json.dumps({"task": "rmsnorm", "source": open(sys.argv[1]).read()}))' \
  "$src/tasks/rmsnorm/starter.cu")
started=$SECONDS
status=0
KILN_RUNNER=$url timeout "$(left)" "$kiln" --log-level warn call benchmark --json "$args" \
  >"$out/benchmark.txt" 2>&1 || status=$?
say "kiln call benchmark: exit $status after $((SECONDS - started)) s"
[[ $status == 124 ]] && fail "the benchmark call passed the total limit of ${limit} s (runner.log)"
sed -n '1,40p' "$out/benchmark.txt"

# 5. The Slurm job behind it.
job=$(grep -o '(job j-[0-9a-z-]*' "$out/benchmark.txt" | head -n 1 | cut -c6- || true)
slurm_id=""
[[ -n $job ]] && slurm_id=$(grep -o "job $job is Slurm job [0-9]*" "$out/runner.log" | awk '{print $6}' | head -n 1 || true)
[[ -n $slurm_id ]] || fail "no Slurm job for runner job '${job:-?}' in runner.log (benchmark.txt says why)"
scontrol show job "$slurm_id" >"$out/slurm_job.txt" 2>&1 || true
cp "$work/runner-cache/jobs/$job/slurm.out" "$work/runner-cache/jobs/$job/worker.log" "$out/" 2>/dev/null || true
say "Slurm job $slurm_id: $(grep -o 'JobState=[A-Z_]*' "$out/slurm_job.txt" | head -n 1) $(grep -o 'TresPerNode=[^ ]*' "$out/slurm_job.txt" | head -n 1) $(grep -o ' TRES=[^ ]*' "$out/slurm_job.txt" | head -n 1)"

if [[ $simulated == 1 ]]; then
  grep -q "does not time them" "$out/benchmark.txt" ||
    fail "the simulated worker's benchmark did not come back as its refusal (benchmark.txt)"
  say "OK: the benchmark ran as Slurm job $slurm_id and came back as the simulated worker's refusal"
else
  summary=$(grep -m 1 '^benchmark ' "$out/benchmark.txt" || true)
  [[ $summary == *PASSED* ]] || fail "the benchmark did not pass: ${summary:-no summary} (benchmark.txt, worker.log)"
  say "OK: $summary"
fi
