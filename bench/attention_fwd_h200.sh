#!/usr/bin/env bash
# The attention_fwd task on a GPU through kiln's own `benchmark` (every gate, CUPTI, interleaved
# with the task's baseline, cold L2), all eleven workloads, for:
#   baseline   tasks/attention_fwd/baseline.cu as a candidate (its TFLOP/s; speedup ~1 vs itself)
#   starter    tasks/attention_fwd/starter.cu
#   attention_flash_mma, attention_hopper_wgmma   the zoo's attention entries as candidates
# and a table per candidate of each workload's median time, the baseline's median in the same
# job, the speedup, TFLOP/s and % of the dense bf16 tensor-core peak (989.4 TFLOP/s on an H200).
#
#   bench/attention_fwd_h200.sh OUT_DIR [CANDIDATE...]    (default: all four, in that order)
#
# Needs a GPU, kiln and kiln-worker on PATH (or KILN=path), jq, and the environment kiln needs
# to find its tasks when it is not run from a build tree (KILN_TASKS_DIR, KILN_KB_DIR,
# KILN_ABI_INCLUDE), as bench/zoo_benchmark.sh. Writes OUT_DIR/NAME.json (the tool's
# structuredContent), OUT_DIR/NAME.log, OUT_DIR/summary.jsonl (one line per candidate and
# workload) and OUT_DIR/summary.md (the tables), and prints the tables.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 OUT_DIR [baseline|starter|attention_flash_mma|attention_hopper_wgmma ...]" >&2
  exit 2
fi
out=$1
shift
candidates=("$@")
if [[ ${#candidates[@]} -eq 0 ]]; then
  candidates=(baseline starter attention_flash_mma attention_hopper_wgmma)
fi
kiln=${KILN:-kiln}
src=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
: > "$out/summary.jsonl"
: > "$out/summary.md"

source_of() {
  case $1 in
    baseline | starter) echo "$src/tasks/attention_fwd/$1.cu" ;;
    *) echo "$src/kb/zoo/$1/kernel.cu" ;;
  esac
}

for name in "${candidates[@]}"; do
  file=$(source_of "$name")
  if [[ ! -f $file ]]; then
    echo "$name: no $file" >&2
    exit 2
  fi
  args=$(jq -n --rawfile s "$file" '{source: $s, task: "attention_fwd"}')
  start=$(date +%s.%N)
  "$kiln" --log-level warn call benchmark --json "$args" --structured > "$out/$name.json" \
    2> "$out/$name.log" || true
  end=$(date +%s.%N)
  wall=$(awk "BEGIN {printf \"%.1f\", $end - $start}")
  if ! { [ -s "$out/$name.json" ] && jq -e 'type == "object"' "$out/$name.json" > /dev/null 2>&1; }; then
    jq -cn --arg id "$name" --arg e "$(cat "$out/$name.json" "$out/$name.log" | head -c 400)" \
      '{candidate: $id, status: "no_result", error: $e}' | tee -a "$out/summary.jsonl"
    continue
  fi
  jq -c --arg id "$name" --arg wall "$wall" '
    . as $r | (.workloads // [])[]
    | {candidate: $id, wall_s: ($wall | tonumber), status: $r.status, geomean: $r.summary.geomean_speedup, scored: $r.summary.scored,
       workload: .name, passed: .passed, failure: .failure, time_us: .time_us.median,
       baseline_time_us: .baseline_time_us.median, speedup: .speedup, tflops: .tflops,
       pct_of_peak_flops: .pct_of_peak_flops, cv: .time_us.cv}' \
    "$out/$name.json" >> "$out/summary.jsonl"
  {
    echo
    echo "## $name ($(jq -r '.status // "?"' "$out/$name.json"), geomean speedup" \
      "$(jq -r '.summary.geomean_speedup // "n/a"' "$out/$name.json"), ${wall} s)"
    echo
    echo "| workload | pass | time (µs) | baseline (µs) | speedup | TFLOP/s | % of bf16 peak |"
    echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
    jq -r '(.workloads // [])[] |
      "| \(.name) | \(if .passed then "PASS" else "FAIL " + (.failure // "" | tostring) end) | " +
      "\(.time_us.median // "-" | tostring) | \(.baseline_time_us.median // "-" | tostring) | " +
      "\(.speedup // "-" | tostring) | \(.tflops // "-" | tostring) | " +
      "\(.pct_of_peak_flops // "-" | tostring) |"' "$out/$name.json"
  } | tee -a "$out/summary.md"
done
