// The builds a job loads: the candidate, in the job's own build folder; the task's baseline,
// CPU reference and GPU reference (if it has one), cached per task beside it in a folder named by
// the build's fingerprint, so every job of a task shares them and a changed toolkit or source
// builds anew.
#pragma once

#include "kiln/compiler/kernel_build.h"
#include "kiln/tasks/task.h"
#include "kiln/worker/job_spec.h"

namespace kiln::worker {

// The candidate's kernel.cu for the task's arch, refused if it links a banned symbol.
compiler::BuildRequest candidate_build_request(const JobSpec& spec, const tasks::Task& task);

// The incumbent's kernel.cu (JobSpec::incumbent), as the candidate's, cached beside the
// candidate's build folder by its fingerprint (the frontier's best comes back job after job).
compiler::BuildRequest incumbent_build_request(const compiler::KernelBuild& builder,
                                               const JobSpec& spec, const tasks::Task& task);

// The task's baseline kernel (with the libraries it names, cuBLAS say).
compiler::BuildRequest baseline_build_request(const compiler::KernelBuild& builder,
                                              const JobSpec& spec, const tasks::Task& task);

// The task's CPU reference, built with the host compiler.
compiler::BuildRequest reference_build_request(const compiler::KernelBuild& builder,
                                               const JobSpec& spec, const tasks::Task& task);

// The task's GPU reference (files.gpu_reference), a kernel on the ABI for the task's arch.
compiler::BuildRequest gpu_reference_build_request(const compiler::KernelBuild& builder,
                                                   const JobSpec& spec, const tasks::Task& task);

}  // namespace kiln::worker
