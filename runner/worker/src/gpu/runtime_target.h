// Which CUDA runtime this build of the worker links: the GPU's libcudart (kiln-worker), or kiln's
// simulated runtime, libkiln_cudart_sim (kiln-worker-sim), which runs every kernel on the CPU
// simulator so CI runs the correctness gates without a GPU (runner/worker/README.md, "The
// simulated worker"). runtime_target_gpu.cpp and runtime_target_sim.cpp define these functions;
// each build links one of them (runner/worker/CMakeLists.txt), so the job drivers have no
// conditional compilation.
#pragma once

#include <string>
#include <vector>

#include "kiln/base/confine.h"
#include "kiln/base/result.h"
#include "kiln/compiler/toolchain.h"
#include "kiln/tasks/task.h"
#include "kiln/worker/job_spec.h"

namespace kiln::worker {

// "gpu" or "simulator", for messages and the result's notes.
const char* runtime_target_name();

// The toolchain that builds kernels this runtime can load.
compiler::Toolchain toolchain_for_runtime(compiler::Toolchain toolchain);

// Ok when this runtime can run a job of `kind`; otherwise an error that says where to run it.
Status runtime_runs(JobKind kind);

// The task as this runtime runs it (the same in the verifier and in the candidate host); each
// change appends a sentence to `notes`.
void adapt_task_to_runtime(tasks::Task* task, std::vector<std::string>* notes);

// What the confined candidate host needs beyond a CUDA process's rules.
void extend_confinement_for_runtime(ConfinePolicy* policy);

}  // namespace kiln::worker
