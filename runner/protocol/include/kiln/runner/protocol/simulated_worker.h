// The simulated worker's answer to a job it cannot run (runner/worker/README.md, "The simulated
// worker"): kiln-worker-sim verifies on the CPU simulator and never times, so a benchmark,
// profile or sanitize job ends with status `error` and these words, which reach the agent
// unchanged through any runner (local or Slurm). Shared with the test workers that stand in
// for it.
#pragma once

#include <string>

#include "kiln/runner/protocol/job_kind.h"

namespace kiln::runner::protocol {

inline std::string simulated_worker_refusal(JobKind kind) {
  return "this runner's worker is kiln-worker-sim, the simulated worker: it verifies "
         "candidates on the CPU simulator but does not time them, so a " +
         std::string(kind_name(kind)) +
         " job needs a GPU. Point KILN_RUNNER at a runner with kiln-worker on a GPU (`kiln "
         "runner --gpus 0` on a GPU machine, or `kiln runner --slurm --gres gpu:1`); until "
         "then, simulate checks correctness here";
}

}  // namespace kiln::runner::protocol
