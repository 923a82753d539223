#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test
# that needs no GPU (GPU tests carry the ctest label `gpu`; run them with
# `ctest --test-dir build -L gpu` on a machine with one). The include graph is checked
# against the layering (cmake/check_includes.cmake) as the ctest `kiln_layering`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/format.sh   # formatting is a check: a difference from .clang-format fails here
scripts/build.sh
(cd tests/integration && [ -d node_modules ] || npm ci --no-audit --no-fund)
ctest --test-dir build --output-on-failure -LE gpu -j "${KILN_JOBS:-$(nproc)}"
