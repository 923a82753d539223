// kiln-worker: the GPU's own runtime. Nothing to change (runtime_target.h).
#include "runtime_target.h"

namespace kiln::worker {

const char* runtime_target_name() { return "gpu"; }

compiler::Toolchain toolchain_for_runtime(compiler::Toolchain toolchain) { return toolchain; }

Status runtime_runs(JobKind) { return Ok{}; }

void adapt_task_to_runtime(tasks::Task*, std::vector<std::string>*) {}

void extend_confinement_for_runtime(ConfinePolicy*) {}

}  // namespace kiln::worker
