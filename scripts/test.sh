#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test
# that needs no GPU (GPU tests carry the ctest label `gpu`; run them with
# `ctest --test-dir build -L gpu` on a machine with one).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
(cd tests/integration && [ -d node_modules ] || npm ci --no-audit --no-fund)
ctest --test-dir build --output-on-failure -LE gpu -j "${KILN_JOBS:-$(nproc)}"
