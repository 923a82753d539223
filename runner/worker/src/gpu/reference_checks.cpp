// A candidate's outputs against the exact reference. With the task's GPU reference
// (files.gpu_reference) every element is compared on the GPU, under the task's tolerance; the
// GPU reference is trusted only once it agreed with the CPU reference on sampled rows of the
// workload's first inputs. Without one, the CPU reference computes all rows or a sample of
// them (tasks/reference_check.h) from host copies.
#include <algorithm>

#include "cuda_status.h"
#include "harness_kernels.h"
#include "kiln/tasks/numeric_codec.h"
#include "kiln/tasks/poison_pattern.h"
#include "workload_session.h"

namespace kiln::worker {

namespace {

// The anchor: a CPU reference check small enough to cost well under a second on the largest
// workload, over rows drawn from the hidden seed.
tasks::ReferenceBudget anchor_budget(const tasks::ReferenceBudget& job_budget) {
  tasks::ReferenceBudget budget = job_budget;
  budget.full_check_flops = std::min(budget.full_check_flops, 2e9);
  budget.sampled_check_flops = std::min(budget.sampled_check_flops, 1e9);
  budget.full_check_elements = std::min<int64_t>(budget.full_check_elements, 1 << 20);
  budget.sampled_check_elements = std::min<int64_t>(budget.sampled_check_elements, 1 << 18);
  return budget;
}

// The GPU reference may differ from the CPU reference by this fraction of the tolerance (a
// task's GPU reference should agree bit for bit; the margin keeps a transcendental function's
// last-bit difference from breaking a task while any real error stays visible).
constexpr double kAnchorFraction = 1.0 / 16.0;

// The pattern the GPU reference's outputs are filled with before each run: elements it left
// unwritten are found by comparing its output with itself.
constexpr int64_t kReferencePoisonCall = 0x7265660000ll;  // "ref"

// The first extent of the (last) output tensor: the rows a row plan samples.
int64_t output_rows(const tasks::WorkloadLayout& layout) {
  int64_t rows = 0;
  for (const auto& t : layout.tensors) {
    if (t.is_output) rows = t.shape[0];
  }
  return rows;
}

}  // namespace

bool WorkloadSession::reference_check(const TensorSet& inputs, const TensorSet& outputs,
                                      const std::vector<uint64_t>& poison,
                                      const std::vector<int64_t>& required_rows, uint64_t plan_seed,
                                      const std::string& phase, std::string_view mismatch_gate,
                                      tasks::ErrorStats* stats) {
  if (!inputs_as_drawn(inputs, phase + ", before the reference")) return false;
  if (job_.gpu_reference != nullptr)
    return gpu_reference_check(inputs, outputs, poison, plan_seed, phase, mismatch_gate, stats);
  const ScopedSeconds timed(wall(&WallTime::cpu_reference_s));
  tasks::HostTensors host;
  if (!host_copy_for_reference(inputs, outputs, &host)) return false;
  const tasks::RowPlan plan =
      tasks::RowSampler::plan(layout_, job_.budget, plan_seed, required_rows);
  const tasks::ReferenceCheck check(job_.reference, job_.tolerance);
  auto run = check.run(layout_, host, plan);
  if (!run) {
    harness_failure(run.error().message);
    return false;
  }
  cpu_answer_ = std::move(*run);
  *stats = check.compare(layout_, *cpu_answer_, host, poison);
  note_checked_rows(plan);
  if (!stats->passes(job_.tolerance.max_mismatch_fraction)) {
    fail(mismatch_gate, phase + ": against the CPU reference, " + stats->summary());
    return false;
  }
  return true;
}

bool WorkloadSession::gpu_reference_check(const TensorSet& inputs, const TensorSet& outputs,
                                          const std::vector<uint64_t>& poison, uint64_t anchor_seed,
                                          const std::string& phase, std::string_view mismatch_gate,
                                          tasks::ErrorStats* stats) {
  {
    const ScopedSeconds timed(wall(&WallTime::gpu_reference_s));
    if (auto s = run_gpu_reference(inputs); !s) {
      harness_failure(s.error().message);
      return false;
    }
  }
  if (!anchored_) {
    if (!anchor_gpu_reference(inputs, anchor_seed)) return false;
    anchored_ = true;
  }
  auto against = against_reference(outputs, poison);
  if (!against) {
    harness_failure(against.error().message);
    return false;
  }
  *stats = *against;
  result_->checked =
      "every element against the exact reference (the task's GPU reference, which agreed with "
      "the CPU reference on sampled rows)";
  if (!stats->passes(job_.tolerance.max_mismatch_fraction)) {
    fail(mismatch_gate, phase + ": against the exact reference, " + stats->summary());
    return false;
  }
  return true;
}

Status WorkloadSession::run_gpu_reference(const TensorSet& inputs) {
  const cudaStream_t hs = job_.env.harness_stream;
  for (size_t t = 0; t < layout_.tensors.size(); ++t) {
    const tasks::TensorLayout& tensor = layout_.tensors[t];
    if (!tensor.is_output) continue;
    const uint64_t pattern = tasks::PoisonPattern::for_call(tensor.dtype, kReferencePoisonCall);
    if (auto s = cuda_ok(launch_fill_pattern(reference_out_.at(t)->data(), tensor.elements(),
                                             tasks::dtype_size(tensor.dtype), pattern, hs),
                         "clearing the GPU reference's " + tensor.name);
        !s)
      return s;
  }
  const std::vector<void*> pointers = call_pointers(layout_, inputs, reference_out_);
  const std::vector<kiln_tensor> tensors = layout_.abi_tensors(pointers);
  const std::vector<kiln_scalar> scalars = layout_.abi_scalars();
  const int status = job_.gpu_reference(tensors.data(), static_cast<int>(tensors.size()),
                                        scalars.data(), static_cast<int>(scalars.size()), hs);
  if (status != KILN_OK) {
    return make_error("the task's GPU reference returned status " + std::to_string(status) +
                      " for workload " + layout_.workload + "; its gpu_reference.cu needs fixing");
  }
  if (auto s = cuda_ok(cudaStreamSynchronize(hs), "the task's GPU reference"); !s) return s;
  // Every element written: the reference's output against itself counts what still holds the
  // pattern.
  std::vector<uint64_t> patterns;
  for (const auto& t : layout_.tensors) {
    if (t.is_output)
      patterns.push_back(tasks::PoisonPattern::for_call(t.dtype, kReferencePoisonCall));
  }
  OutputComparison self = compare(reference_out_, reference_out_, job_.tolerance, patterns);
  if (!self.ok) return make_error(self.error);
  if (self.stats.poisoned > 0) {
    return make_error("the task's GPU reference left " + std::to_string(self.stats.poisoned) +
                      " output elements of workload " + layout_.workload +
                      " unwritten; its gpu_reference.cu needs fixing");
  }
  return Ok{};
}

bool WorkloadSession::anchor_gpu_reference(const TensorSet& inputs, uint64_t seed) {
  const ScopedSeconds timed(wall(&WallTime::cpu_reference_s));
  tasks::HostTensors host;
  if (!host_copy_for_reference(inputs, reference_out_, &host)) return false;
  const tasks::RowPlan plan =
      tasks::RowSampler::plan(layout_, anchor_budget(job_.budget), seed, {});
  tasks::Tolerance near = job_.tolerance;
  near.atol *= kAnchorFraction;
  near.rtol *= kAnchorFraction;
  near.max_mismatch_fraction = 0;
  const tasks::ReferenceCheck check(job_.reference, near);
  auto run = check.run(layout_, host, plan);
  if (!run) {
    harness_failure(run.error().message);
    return false;
  }
  const tasks::ErrorStats stats = check.compare(layout_, *run, host, {});
  tasks::Tolerance exact;
  exact.atol = 0;
  exact.rtol = 0;
  const tasks::ErrorStats bitwise =
      tasks::ReferenceCheck(job_.reference, exact).compare(layout_, *run, host, {});
  result_->extra["gpu_reference_anchor"] = {
      {"rows", plan.full ? output_rows(layout_) : static_cast<int64_t>(plan.rows.size())},
      {"elements", stats.checked},
      {"differing_elements", bitwise.mismatches},
      {"max_abs", stats.max_abs}};
  if (!stats.passes(0)) {
    harness_failure("the task's GPU reference disagrees with its CPU reference on workload " +
                    layout_.workload + " (within a sixteenth of the tolerance: " + stats.summary() +
                    "); the task is broken, not the candidate: fix " +
                    job_.task->gpu_reference_path.filename().string());
    return false;
  }
  return true;
}

Result<tasks::ErrorStats> WorkloadSession::against_reference(const TensorSet& outputs,
                                                             const std::vector<uint64_t>& poison) {
  if (job_.gpu_reference != nullptr) {
    const ScopedSeconds timed(wall(&WallTime::gpu_reference_s));
    OutputComparison cmp = compare(outputs, reference_out_, job_.tolerance, poison);
    if (!cmp.ok) return make_error(cmp.error);
    return cmp.stats;
  }
  tasks::HostTensors host;
  if (auto s = host_copy(outputs, true, &host); !s) return s.error();
  return against_reference(host, poison);
}

Result<tasks::ErrorStats> WorkloadSession::against_reference(const tasks::HostTensors& host,
                                                             const std::vector<uint64_t>& poison) {
  if (job_.gpu_reference == nullptr) {
    if (!cpu_answer_) return make_error("internal: no reference answer to compare with");
    const ScopedSeconds timed(wall(&WallTime::cpu_reference_s));
    return tasks::ReferenceCheck(job_.reference, job_.tolerance)
        .compare(layout_, *cpu_answer_, host, poison);
  }
  const ScopedSeconds timed(wall(&WallTime::gpu_reference_s));
  tasks::HostTensors expected;
  if (auto s = host_copy(reference_out_, true, &expected); !s) return s.error();
  tasks::ErrorStats total;
  size_t output_index = 0;
  for (size_t t = 0; t < layout_.tensors.size(); ++t) {
    const tasks::TensorLayout& tensor = layout_.tensors[t];
    if (!tensor.is_output) continue;
    const uint64_t pattern = output_index < poison.size() ? poison[output_index] : 0;
    ++output_index;
    if (host[t].size() != expected[t].size())
      return make_error("internal: host copy of " + tensor.name + " has the wrong size");
    total.merge(tasks::compare_host(host[t].data(), expected[t].data(), tensor.dtype,
                                    tensor.elements(), tensor.shape, job_.tolerance, pattern,
                                    nullptr,
                                    tensor.ignored_rows.empty() ? nullptr : &tensor.ignored_rows));
  }
  return total;
}

bool WorkloadSession::host_copy_for_reference(const TensorSet& inputs, const TensorSet& outputs,
                                              tasks::HostTensors* host) {
  if (auto s = host_copy(inputs, false, host); !s) {
    harness_failure(s.error().message);
    return false;
  }
  if (auto s = host_copy(outputs, true, host); !s) {
    harness_failure(s.error().message);
    return false;
  }
  return true;
}

void WorkloadSession::note_checked_rows(const tasks::RowPlan& plan) {
  result_->checked = plan.describe(output_rows(layout_));
}

}  // namespace kiln::worker
