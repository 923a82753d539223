#!/usr/bin/env bash
# Configures and builds kiln in ./build (Release with debug info, Ninja).
#   scripts/build.sh              everything (libraries, programs, tests, benchmarks)
#   scripts/build.sh kiln ...     only the named targets and what they need
# Extra CMake options go in KILN_CMAKE_ARGS; KILN_JOBS sets the parallelism (default: nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${KILN_JOBS:-$(nproc)}
# shellcheck disable=SC2086
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo ${KILN_CMAKE_ARGS:-} >/dev/null
ninja -C build -j "$jobs" "$@"
