// kiln-worker-sim: kiln's simulated CUDA runtime (runtime_target.h). Kernels are built as PTX
// against libkiln_cudart_sim, the workloads are the task's small sim_workloads, and a baseline
// that needs a vendor library (which has no simulated form) is replaced by the task's GPU
// reference. Only verify jobs run: the simulator's clock says nothing about a GPU's speed.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "kiln/runner/protocol/simulated_worker.h"
#include "runtime_target.h"

namespace kiln::worker {

namespace {

// The libkiln_cudart_sim.so this process loaded (it defines cudaMalloc here).
std::filesystem::path loaded_runtime_library() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cudaMalloc), &info) == 0 || info.dli_fname == nullptr)
    return {};
  std::error_code ec;
  return std::filesystem::weakly_canonical(info.dli_fname, ec);
}

}  // namespace

const char* runtime_target_name() { return "simulator"; }

compiler::Toolchain toolchain_for_runtime(compiler::Toolchain toolchain) {
  toolchain.simulated_runtime = loaded_runtime_library();
  return toolchain;
}

Status runtime_runs(JobKind kind) {
  if (kind == JobKind::kVerify) return Ok{};
  return make_error(runner::protocol::simulated_worker_refusal(kind));
}

void adapt_task_to_runtime(tasks::Task* task, std::vector<std::string>* notes) {
  if (!task->sim_workloads.empty()) {
    task->workloads = task->sim_workloads;
    notes->push_back("simulated worker: the task's " + std::to_string(task->workloads.size()) +
                     " sim_workloads stand in for its workloads");
  }
  if (!task->baseline_libraries.empty() && !task->gpu_reference_path.empty()) {
    task->baseline_path = task->gpu_reference_path;
    task->baseline_libraries.clear();
    notes->push_back(
        "simulated worker: the task's GPU reference stands in for its baseline, which links "
        "a vendor library");
  }
}

void extend_confinement_for_runtime(ConfinePolicy* policy) {
  // The candidate's library links the simulated runtime from its folder, and the simulator
  // shares device buffers between processes as POSIX shared memory objects in /dev/shm.
  const std::filesystem::path library = loaded_runtime_library();
  if (!library.empty()) policy->readable.push_back(library.parent_path());
  policy->writable.push_back("/dev/shm");
}

}  // namespace kiln::worker
