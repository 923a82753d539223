#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test
# that needs no GPU (GPU tests carry the ctest label `gpu`; run them with
# `ctest --test-dir build -L gpu` on a machine with one), the Slurm cluster tests (label `slurm`)
# included: as root they start a single-node cluster on loopback, otherwise they are skipped
# and say why. The include graph is checked
# against the layering (cmake/check_includes.cmake) as the ctest `kiln_layering`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Without the toolkit the build leaves out the compiler, simulator and worker tests; the test
# command refuses rather than pass on less.
if [ ! -x "${KILN_CUDA_ROOT:-/usr/local/cuda}/bin/nvcc" ]; then
  echo "kiln: the tests need the CUDA toolkit (nvcc) at ${KILN_CUDA_ROOT:-/usr/local/cuda};" \
    "install CUDA 13.0 there or set KILN_CUDA_ROOT" >&2
  exit 1
fi
scripts/format.sh   # formatting is a check: a difference from .clang-format fails here
KILN_CMAKE_ARGS="-DKILN_CUDA_ROOT=${KILN_CUDA_ROOT:-/usr/local/cuda}" scripts/build.sh
(cd tests/integration && [ -d node_modules ] || npm ci --no-audit --no-fund)
# The real Claude Code and Codex clients (about 800 MB) for the agent-configuration tests.
(cd tests/integration/agents && [ -d node_modules ] || npm ci --no-audit --no-fund)
ctest --test-dir build --output-on-failure -LE gpu -j "${KILN_JOBS:-$(nproc)}"
