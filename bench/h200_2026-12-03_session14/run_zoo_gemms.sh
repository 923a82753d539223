#!/usr/bin/env bash
# Device call (2026-12-03, fourteenth session), after run_worker.sh: WorkerGpu.ZooGemmsPass again,
# now that the two skinny-shape entries run only the workload they are for.
set -uo pipefail
cd "$(dirname "$0")/../.."
export PATH=$PWD/.gpu/bin:$PATH LD_LIBRARY_PATH=$PWD/.gpu/lib:/usr/local/cuda/lib64
KILN_WORKER_CACHE=$PWD/.gpu/cache KILN_SOURCE_DIR=$PWD KILN_WORKER_BIN=$PWD/.gpu/bin/kiln-worker \
  timeout 200 .gpu/bin/kiln_worker_gpu_tests --gtest_filter=WorkerGpu.ZooGemmsPass > $OUT/zoo_gemms.txt 2>&1
echo "rc=$?"; grep -E '^\[ +(OK|FAILED|PASSED) +\]|Failure|error=' $OUT/zoo_gemms.txt | cut -c1-300 | head -20
