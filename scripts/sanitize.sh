#!/usr/bin/env bash
# The CPU tests under AddressSanitizer and UndefinedBehaviorSanitizer (gcc, KILN_SANITIZE=ON,
# RelWithDebInfo, in ./build-san). Not part of CI: scripts/test.sh stays the test command.
#   scripts/sanitize.sh                   build everything, run every test not labelled gpu
#   scripts/sanitize.sh 'Json|Session'    only the tests whose names match (an extended regex,
#                                         as for ctest -R)
#   KILN_SANITIZE_TARGETS="kiln_base_tests kiln_mcp_tests" scripts/sanitize.sh
#                                         build only these targets (and what they need); tests
#                                         whose program was not built are left out, and listed
# A leak, a memory error or undefined behaviour fails the test that hit it. KILN_JOBS sets the
# parallelism of the build and of ctest (default: nproc).
#
# Tests that need the CUDA driver carry the label gpu and are left out with it. A test program
# whose tests cannot work under ASan otherwise goes in `excluded` below, with its reason here.
# None is listed: the tests of base, mcp, tasks, ptx, check, frontier and runner and the fuzz
# replays pass under it; the compiler, simulator, tools, worker, CLI and integration tests have
# not been run under it yet.
set -euo pipefail
cd "$(dirname "$0")/.."
regex=${1:-}
jobs=${KILN_JOBS:-$(nproc)}
# Test programs (file names) whose tests cannot run under ASan, each with its reason above.
excluded=()

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
  -DCMAKE_C_COMPILER_LAUNCHER=ccache)
CC=gcc CXX=g++ cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_SANITIZE=ON \
  -DKILN_BUILD_BENCH=OFF -DKILN_CUDA_ROOT="${KILN_CUDA_ROOT:-/usr/local/cuda}" \
  "${launcher[@]}" >/dev/null
# shellcheck disable=SC2086
ninja -C build-san -j "$jobs" ${KILN_SANITIZE_TARGETS:-}

# detect_leaks: LeakSanitizer, on for every test program and the kiln programs they start.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:check_initialization_order=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# The tests to run, chosen here and passed to ctest by number (-I): combined with -R or -LE,
# ctest numbers only the tests those filters keep, so the filters are applied here too.
# Left out: tests labelled gpu; tests not matching the regex; tests whose program was not built
# (an unbuilt gtest program leaves one placeholder test without a command); the integration
# tests when bin/kiln, which they start, was not built; the excluded programs.
sep=$'\x1f'
numbers=$(ctest --test-dir build-san --show-only=json-v1 | jq -r --arg sep "$sep" '.tests |
  to_entries[] | [(.key + 1 | tostring), (.value.command[0] // ""),
    ([.value.properties[]? | select(.name == "LABELS") | .value[]] | join(",")), .value.name] |
  join($sep)' |
  while IFS=$sep read -r number program labels name; do
    if [[ ",$labels," == *,gpu,* ]] || [[ -n $regex && ! $name =~ $regex ]]; then
      continue
    elif [ -z "$program" ] || [ ! -x "$program" ] ||
      { [[ ",$labels," == *,integration,* ]] && [ ! -x build-san/bin/kiln ]; }; then
      echo "kiln: not built, left out: $name" >&2
    elif [[ " ${excluded[*]} " == *" $(basename "$program") "* ]]; then
      echo "kiln: cannot run under ASan, left out: $name" >&2
    else
      echo "$number"
    fi
  done | paste -sd, -)
if [ -z "$numbers" ]; then
  echo "kiln: no test to run: none matches, or their programs were not built" \
    "(KILN_SANITIZE_TARGETS)" >&2
  exit 1
fi
ctest --test-dir build-san --output-on-failure -j "$jobs" -I "0,0,0,$numbers"
