// A candidate's outputs against the baseline's on the same inputs: every element, on the GPU,
// under twice the task's tolerance.
#include "cuda_status.h"
#include "harness_kernels.h"
#include "kiln/tasks/numeric_codec.h"
#include "workload_session.h"

namespace kiln::worker {

WorkloadSession::OutputComparison WorkloadSession::compare(const TensorSet& actual,
                                                           const TensorSet& expected,
                                                           const tasks::Tolerance& tolerance,
                                                           const std::vector<uint64_t>& poison) {
  const ScopedSeconds timed(wall(&WallTime::output_checks_s));
  OutputComparison out;
  const cudaStream_t hs = job_.env.harness_stream;
  size_t output_index = 0;
  for (size_t t = 0; t < layout_.tensors.size(); ++t) {
    const tasks::TensorLayout& tensor = layout_.tensors[t];
    if (!tensor.is_output) continue;
    const uint64_t pattern = output_index < poison.size() ? poison[output_index] : 0;
    ++output_index;
    CompareCounters counters{};
    const GuardedBuffer* actual_buffer = actual.at(t);
    const GuardedBuffer* expected_buffer = expected.at(t);
    if (actual_buffer == nullptr || expected_buffer == nullptr) {
      out.ok = false;
      out.error = "internal: no buffer for output " + tensor.name;
      return out;
    }
    const void* a = actual_buffer->data();
    const void* e = expected_buffer->data();
    const GuardedBuffer* mask = t < row_masks_.size() ? row_masks_[t].get() : nullptr;
    const auto* ignored = mask != nullptr ? static_cast<const uint8_t*>(mask->data()) : nullptr;
    const int64_t row_elements = tensor.elements() / tensor.shape[0];
    cudaError_t err = reset_compare(job_.env.scratch->compare(), hs);
    if (err == cudaSuccess) {
      err = launch_compare(a, e, tensor.dtype, tensor.elements(), tolerance.atol, tolerance.rtol,
                           pattern, ignored, row_elements, job_.env.scratch->compare(), hs);
    }
    if (err == cudaSuccess) {
      err = cudaMemcpyAsync(&counters, job_.env.scratch->compare(), sizeof counters,
                            cudaMemcpyDeviceToHost, hs);
    }
    if (err == cudaSuccess) err = cudaStreamSynchronize(hs);
    if (err != cudaSuccess) {
      out.ok = false;
      out.error = describe_cuda(err, "comparing " + tensor.name);
      return out;
    }
    tasks::ErrorStats stats;
    stats.checked = mask != nullptr ? tensor.checked_elements() : tensor.elements();
    stats.mismatches = static_cast<int64_t>(counters.mismatches);
    stats.far = static_cast<int64_t>(counters.far);
    stats.nan = static_cast<int64_t>(counters.nan);
    stats.inf = static_cast<int64_t>(counters.inf);
    stats.poisoned = static_cast<int64_t>(counters.poisoned);
    stats.max_abs = tasks::double_from_bits(counters.max_abs_bits);
    stats.max_rel = tasks::double_from_bits(counters.max_rel_bits);
    if (counters.first_mismatch != ~0ull) {
      const auto flat = static_cast<int64_t>(counters.first_mismatch);
      const int size = tasks::dtype_size(tensor.dtype);
      uint64_t abits = 0;
      uint64_t ebits = 0;
      cudaMemcpyAsync(&abits, static_cast<const unsigned char*>(a) + flat * size, size,
                      cudaMemcpyDeviceToHost, hs);
      cudaMemcpyAsync(&ebits, static_cast<const unsigned char*>(e) + flat * size, size,
                      cudaMemcpyDeviceToHost, hs);
      cudaStreamSynchronize(hs);
      tasks::Mismatch m;
      m.index = tensor.index_of(flat);
      m.expected = tasks::decode(tensor.dtype, ebits);
      m.actual = tasks::decode(tensor.dtype, abits);
      stats.first_mismatches.push_back(m);
    }
    out.bitwise += static_cast<int64_t>(counters.bitwise);
    out.stats.merge(stats);
  }
  return out;
}

bool WorkloadSession::check_against_baseline(const TensorSet& candidate, const TensorSet& baseline,
                                             const std::vector<const TensorSet*>& earlier,
                                             const std::vector<uint64_t>& poison,
                                             const std::string& phase,
                                             std::string_view mismatch_gate) {
  OutputComparison cmp = compare(candidate, baseline, job_.baseline_tolerance, poison);
  if (!cmp.ok) {
    harness_failure(cmp.error);
    return false;
  }
  if (cmp.stats.poisoned > 0) {
    fail(gate::kPoisonedOutputs,
         phase + ": " + std::to_string(cmp.stats.poisoned) + " of " +
             std::to_string(cmp.stats.checked) +
             " output elements were never written (they still hold the harness's poison "
             "NaN); write every element of every output on every call");
    return false;
  }
  job_.gates->pass(gate::kPoisonedOutputs);
  if (cmp.stats.mismatches == 0) return true;
  for (const TensorSet* old : earlier) {
    OutputComparison stale = compare(candidate, *old, job_.baseline_tolerance, poison);
    if (stale.ok && stale.stats.mismatches == 0) {
      fail(gate::kFreshInputs,
           phase +
               ": the output is the answer for earlier inputs, not for the current ones "
               "(results carried across calls or keyed to where the inputs live); compute "
               "every call from the values it is given");
      return false;
    }
  }
  fail(mismatch_gate,
       phase +
           ": differs from the baseline's output on the same inputs by more than twice the "
           "task's tolerance: " +
           cmp.stats.summary());
  return false;
}

}  // namespace kiln::worker
