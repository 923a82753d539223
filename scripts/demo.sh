#!/usr/bin/env bash
# kiln's main job on embedded defaults: prepare an optimization run of the bundled fp16_gemm
# task and drive one scripted agent session through it over MCP (stdio JSON-RPC to
# `kiln mcp --run-dir RUN`, recorded in RUN/sessions/): read the task, search and read the
# kernel zoo, write a candidate into the run's scratch folder, compile it, simulate it on the
# CPU and check its synchronization; then, when a GPU runner is reachable (KILN_RUNNER, or a
# GPU on this machine), benchmark it, record it on the frontier and list the frontier. Last,
# `kiln report` writes the run's HTML page. Without a runner it says where it stopped and how
# to add one.
#
# Builds only what the session needs (kiln, kiln-sim-run and their libraries; kiln-worker on a
# machine with a GPU), with ninja's [done/total] progress. The run goes to runs/demo-TIME/
# (KILN_DEMO_OUT sets the folder). KILN_DEMO_BIN=DIR uses programs built elsewhere instead
# (DIR/kiln, DIR/kiln-sim-run, DIR/kiln-worker; their libraries on LD_LIBRARY_PATH): nothing
# is installed or built, for a GPU machine with the CUDA toolkit but no build tools.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
cuda_root=${KILN_CUDA_ROOT:-/usr/local/cuda}

say() { printf '%s\n' "$*"; }
step() { printf '\n== %s\n' "$*"; }
indent() { sed 's/^/   /'; }
elapsed() { printf '%dm%02ds' $(((SECONDS - started) / 60)) $(((SECONDS - started) % 60)); }

prebuilt=${KILN_DEMO_BIN:-}
[ -z "$prebuilt" ] && scripts/install-deps.sh --demo

# What this machine can do decides what to build and how far the session goes.
have_cuda=0
[ -x "$cuda_root/bin/nvcc" ] && have_cuda=1
runner=${KILN_RUNNER:-}
local_gpu=0
if [ -z "$runner" ] && [ "$have_cuda" = 1 ] && command -v nvidia-smi >/dev/null &&
  nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  local_gpu=1
fi
targets=(kiln)
[ "$have_cuda" = 1 ] && targets+=(kiln-sim-run)
[ "$local_gpu" = 1 ] && targets+=(kiln-worker)

if [ -n "$prebuilt" ]; then
  step "using ${targets[*]} from $prebuilt (KILN_DEMO_BIN: nothing installed or built)"
  for program in "${targets[@]}"; do
    if [ ! -x "$prebuilt/$program" ]; then
      say "kiln: $prebuilt/$program is missing; build it (ninja -C build $program) and copy it" \
        "there, or unset KILN_DEMO_BIN to build here" >&2
      exit 1
    fi
  done
  kiln=$(cd "$prebuilt" && pwd)/kiln
  say "kiln: $("$kiln" --version)"
else
  step "building ${targets[*]} (not the tests or the zoo kernels)"
  say "kiln: configuring build/ (CMake, Ninja)"
  # shellcheck disable=SC2086  # KILN_CMAKE_ARGS is a list of options, as in scripts/build.sh
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_CUDA_ROOT="$cuda_root" \
    ${KILN_CMAKE_ARGS:-} >/dev/null
  # The commands that build the targets from nothing (a dry run would not see past the
  # re-check of the globbed source folders).
  steps=$(ninja -C build -t commands "${targets[@]}" | wc -l)
  say "kiln: building ${targets[*]}: at most ${steps} compile and link steps on $(nproc) cores;" \
    "ninja prints [done/total] as it goes (a first build takes over 20 CPU-minutes:" \
    "more than 10 minutes on 2 cores)"
  ninja -C build -j "${KILN_JOBS:-$(nproc)}" "${targets[@]}"
  kiln=$PWD/build/bin/kiln
  say "kiln: built $("$kiln" --version) in $(elapsed)"
fi

step "kiln setup --task fp16_gemm"
out=${KILN_DEMO_OUT:-$PWD/runs}
name=demo-$(date -u +%Y%m%dT%H%M%SZ)
setup_args=(--task fp16_gemm --out "$out" --name "$name")
[ -n "$runner" ] && setup_args+=(--remote "$runner")
"$kiln" --log-level warn setup "${setup_args[@]}" | sed -n '1,3p' | indent
run=$out/$name
scratch=worktree/candidates/fp16_gemm/scratch

# One MCP session over stdio, as an agent's client holds it. The helpers set `reply` rather
# than print it: the coprocess's pipes are not there in a $(...) subshell.
coproc KILN_MCP { "$kiln" --log-level warn mcp --run-dir "$run" --record "$run/sessions/" \
  2>"$run/demo-mcp.log"; }
mcp_pid=$KILN_MCP_PID
mcp_in=${KILN_MCP[1]}
mcp_out=${KILN_MCP[0]}
request_id=0
reply=
send() { printf '%s\n' "$1" >&"$mcp_in"; }
# rpc METHOD PARAMS_JSON: sends a request and sets `reply` to its response; progress
# notifications on the way are shown as they come.
rpc() {
  request_id=$((request_id + 1))
  send "$(jq -cn --arg m "$1" --argjson p "$2" --argjson id "$request_id" \
    '{jsonrpc: "2.0", id: $id, method: $m, params: $p}')"
  local line
  while IFS= read -r line <&"$mcp_out"; do
    if [ "$(jq -r '.id // empty' <<<"$line")" = "$request_id" ]; then
      reply=$line
      return 0
    fi
    jq -r 'select(.method == "notifications/progress") |
      "   ... \(.params.message // "\(.params.progress)/\(.params.total // "?")")"' <<<"$line"
  done
  say "kiln mcp ended before it answered $1; its log: $run/demo-mcp.log" >&2
  exit 1
}
# call TOOL ARGUMENTS_JSON: tools/call, with a progress token.
call() {
  rpc tools/call "$(jq -cn --arg t "$1" --argjson a "$2" --argjson id "$((request_id + 1))" \
    '{name: $t, arguments: $a, _meta: {progressToken: $id}}')"
}
text_of() { jq -r '.result.content[0].text // .error.message' <<<"$reply"; }
failed() { [ "$(jq -r '(.result.isError // false) or has("error")' <<<"$reply")" = true ]; }

step "an agent's session over MCP (stdio JSON-RPC to kiln mcp --run-dir $run)"
rpc initialize '{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"kiln-demo","version":"1"}}'
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
jq -r '"initialize: protocol \(.result.protocolVersion), \(.result.serverInfo.name) \(.result.serverInfo.version)"' <<<"$reply"
rpc tools/list '{}'
jq -r '"tools/list: \(.result.tools | length) tools: \(.result.tools | map(.name) | join(", "))"' <<<"$reply"

step "get_task: the contract"
call get_task '{}'
text_of | sed -n '1,2p;5p;8,9p' | indent

step "search_zoo: kernels that teach the next step"
call search_zoo '{"query":"fp16 gemm shared memory tiling","limit":3}'
jq -r '.result.structuredContent.hits[] | "\(.id): \(.title) [\(.techniques | join(", "))]"' <<<"$reply" | indent
# The first hit that runs on the task's ABI everywhere (a TN GEMM, not Hopper-only).
entry=$(jq -r '[.result.structuredContent.hits[] | select(.op == "gemm_tn" and .arch == "sm_80")][0].id // "gemm_smem_tiling"' <<<"$reply")

step "read_zoo_entry $entry: its kernel.cu becomes the candidate"
candidate=$scratch/$entry/kernel.cu
mkdir -p "$run/$scratch/$entry"
: >"$run/$candidate"
line=1
while [ -n "$line" ]; do  # page through the file as an agent would (each answer under 10 KB)
  call read_zoo_entry "$(jq -cn --arg id "$entry" --argjson s "$line" '{id: $id, file: "kernel.cu", start_line: $s}')"
  if failed; then text_of | indent; exit 1; fi
  jq -j '.result.structuredContent.text' <<<"$reply" >>"$run/$candidate"
  line=$(jq -r '.result.structuredContent.next_start_line // empty' <<<"$reply")
done
say "   wrote $(wc -l <"$run/$candidate") lines to $run/$candidate"
args=$(jq -cn --arg c "$candidate" '{candidate: $c}')

if [ "$have_cuda" = 0 ]; then
  step "stopped before compile: no CUDA toolkit at $cuda_root"
  say "   compile, simulate and synccheck need nvcc (CUDA 13.0); install it at $cuda_root" \
    "(or set KILN_CUDA_ROOT) and run scripts/demo.sh again"
  exit 1
fi
for tool in compile simulate synccheck; do
  step "$tool"
  call "$tool" "$args"
  text_of | head -n 1 | indent
  if failed; then
    say "   $tool failed; the whole answer:"
    text_of | indent
    exit 1
  fi
done

if [ -z "$runner" ] && [ "$local_gpu" = 0 ]; then
  step "stopped before benchmark: no GPU runner is reachable"
  say "   Everything above ran on this CPU. benchmark, record_candidate and list_frontier need a GPU:"
  say "   - on a GPU host: kiln runner --gpus 0 --listen 0.0.0.0:8000 --token-file TOKEN_FILE"
  say "     (or --listen 127.0.0.1:8000 behind ssh -L 8000:127.0.0.1:8000 gpu-host)"
  say "   - here: KILN_RUNNER=http://gpu-host:8000 KILN_RUNNER_TOKEN=<the token> scripts/demo.sh"
  say "     (a prepared run: kiln setup --task fp16_gemm --remote http://gpu-host:8000)"
  say "   - or run scripts/demo.sh on a machine with a GPU and the CUDA toolkit"
else
  step "benchmark: correctness gates, then timing against cuBLAS on every workload"
  call benchmark "$args"
  text_of | head -n 3 | indent
  result_id=$(jq -r '.result.structuredContent.result_id // empty' <<<"$reply")
  if failed || [ -z "$result_id" ]; then
    say "   the benchmark did not produce a scored result; the whole answer:"
    text_of | indent
  else
    step "record_candidate $result_id"
    call record_candidate "$(jq -cn --arg r "$result_id" --arg n "$entry" '{result_id: $r,
      name: $n, approach: "smem_tiling: the zoo entry as it is",
      hypothesis: "staging tiles in shared memory cuts global loads",
      reason: "the first candidate of the demo"}')"
    text_of | head -n 2 | indent
    step "list_frontier"
    call list_frontier '{"limit":5}'
    text_of | head -n 6 | indent
  fi
fi
exec {mcp_in}>&-  # end the session: kiln mcp exits when its stdin closes
wait "$mcp_pid" 2>/dev/null || true

step "kiln report"
"$kiln" --log-level warn report "$run" | indent
step "done in $(elapsed)"
say "   the run: $run (PROMPT.md, manifest.json, worktree/, sessions/, report.html)"
say "   an agent in it: kiln setup prints how to start Claude Code or Codex there"
