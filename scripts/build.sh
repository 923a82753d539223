#!/usr/bin/env bash
# Configures and builds kiln in ./build (Release with debug info, Ninja).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${KILN_JOBS:-$(nproc)}
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
ninja -C build -j "$jobs"
