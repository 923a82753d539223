#!/usr/bin/env bash
# An optimization run end to end on a GPU machine, for the numbers in bench/RESULTS.md: a
# `kiln runner` on GPU 0, a run prepared against it with `kiln setup --remote`, then
# bench/frontier_run.py (five candidates benchmarked and recorded over one MCP session, each
# would-be best revalidated), `kiln frontier show`, the run's live.log and its worktree history.
#
#   bench/frontier_run.sh OUT_DIR KILN [KILN_WORKER]
#
# KILN_WORKER defaults to the kiln-worker next to KILN. Needs a GPU, the CUDA toolkit, git and
# python3.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 OUT_DIR KILN [KILN_WORKER]" >&2
  exit 2
fi
out=$1
kiln=$2
worker=${3:-$(dirname "$kiln")/kiln-worker}
src=$(cd "$(dirname "$0")/.." && pwd)
work=${KILN_BENCH_WORK:-/tmp/kiln-frontier-run}
port=${KILN_BENCH_PORT:-18777}
rm -rf "$work"
mkdir -p "$work" "$out"

"$kiln" --tasks-dir "$src/tasks" runner --gpus 0 --listen "127.0.0.1:$port" --worker "$worker" \
  --cache-dir "$work/cache" > "$out/runner.log" 2>&1 &
runner=$!
trap 'kill "$runner" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  if (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null; then break; fi
  sleep 0.1
done

git config --global user.email >/dev/null 2>&1 || export GIT_AUTHOR_NAME=kiln GIT_AUTHOR_EMAIL=kiln@localhost \
  GIT_COMMITTER_NAME=kiln GIT_COMMITTER_EMAIL=kiln@localhost
"$kiln" --tasks-dir "$src/tasks" setup --task fp16_gemm --remote "http://127.0.0.1:$port" \
  --out "$work/runs" --name h200 | tee "$out/setup.txt"
start=$(date +%s.%N)
python3 "$src/bench/frontier_run.py" "$kiln" "$work/runs/h200" "$out" | tee "$out/frontier_run.txt"
end=$(date +%s.%N)
echo "frontier_run.py wall_s=$(awk "BEGIN {printf \"%.1f\", $end - $start}")" | tee -a "$out/frontier_run.txt"
"$kiln" --tasks-dir "$src/tasks" frontier show "$work/runs/h200" > "$out/frontier_show.txt" 2>&1 || true
cp "$work/runs/h200/live.log" "$out/live.log" 2> /dev/null || true
git -C "$work/runs/h200/worktree" log --stat > "$out/worktree_log.txt" 2>&1 || true
