// The verify pass (workload_session.h, steps 1-3): correctness on the first inputs against
// the baseline and the exact reference, determinism across two runs, fresh inputs, and work left
// after the calls.
#include "workload_session.h"

namespace kiln::worker {

bool WorkloadSession::verify_pass() {
  result_->name = layout_.workload;
  result_->ran = true;
  result_->passed = true;
  progress("verify: allocating and drawing inputs");
  if (auto s = allocate(false); !s) {
    harness_failure(s.error().message);
    return false;
  }
  if (auto s = draw_inputs(inputs_, kDrawVerify); !s) {
    harness_failure(s.error().message);
    return false;
  }
  // Two candidate runs on the same inputs (determinism), then the baseline.
  progress("verify: first calls");
  const int64_t first_call = job_.calls;
  CallReport run1 = call(Caller::kCandidate, inputs_, candidate_out_, false);
  if (!gate_call(run1, "first call")) return false;
  // The first run's outputs, kept on the GPU for the determinism check.
  TensorSet first_out;
  if (auto s = keep_outputs(candidate_out_, &first_out); !s) {
    harness_failure(s.error().message);
    return false;
  }
  CallReport run2 = call(Caller::kCandidate, inputs_, candidate_out_, false);
  if (!gate_call(run2, "second call")) return false;
  CallReport base = call(Caller::kBaseline, inputs_, baseline_first_, false);
  if (!gate_call(base, "baseline")) return false;
  const std::vector<uint64_t> poison1 = poison_for_call(first_call);
  const std::vector<uint64_t> poison2 = poison_for_call(first_call + 1);
  if (!check_against_baseline(candidate_out_, baseline_first_, {}, poison2, "first inputs",
                              gate::kCorrectness)) {
    return false;
  }

  progress("verify: exact reference");
  tasks::ErrorStats stats2;
  if (!reference_check(inputs_, candidate_out_, poison2, {},
                       job_.seed ^ static_cast<uint64_t>(index_), "first inputs",
                       gate::kCorrectness, &stats2)) {
    return false;
  }
  result_->errors = stats2;
  job_.gates->pass(gate::kCorrectness);
  // The baseline itself against the reference: a task sanity check, reported only.
  if (auto base_stats = against_reference(baseline_first_, poison_for_call(0))) {
    result_->extra["baseline_errors"] = {{"max_abs", base_stats->max_abs},
                                         {"max_rel", base_stats->max_rel},
                                         {"mismatches", base_stats->mismatches}};
    if (!base_stats->passes(job_.tolerance.max_mismatch_fraction)) {
      job_.events->log("warning", layout_.workload +
                                      ": the baseline itself misses the task's tolerance: " +
                                      base_stats->summary());
    }
  }

  // Determinism: the two runs, bit for bit, on the GPU.
  const OutputComparison same =
      compare(candidate_out_, first_out, job_.baseline_tolerance, poison2);
  if (!same.ok) {
    harness_failure(same.error);
    return false;
  }
  const int64_t differing = same.bitwise;
  const int64_t total = same.stats.checked;
  result_->extra["determinism_bitwise_differences"] = differing;
  if (differing == 0) {
    job_.gates->pass(gate::kDeterminism);
  } else {
    auto stats1 = against_reference(first_out, poison1);
    if (!stats1) {
      harness_failure(stats1.error().message);
      return false;
    }
    const std::string what = std::to_string(differing) + " of " + std::to_string(total) +
                             " elements differ bitwise between two runs on the same inputs";
    if (!stats1->passes(job_.tolerance.max_mismatch_fraction) || same.stats.mismatches > 0) {
      fail(gate::kDeterminism,
           what + ", beyond the tolerance (" +
               (same.stats.mismatches > 0 ? same.stats.summary() : stats1->summary()) +
               "): a race, or a read of memory nothing wrote");
      return false;
    }
    job_.gates->pass(gate::kDeterminism);
    job_.gates->note(gate::kDeterminism,
                     layout_.workload + ": " + what +
                         ", all within tolerance (passes; the summation order varies)");
  }

  // Fresh inputs: new values at the same addresses; a few values changed; new addresses.
  progress("verify: fresh inputs");
  if (auto s = draw_inputs(inputs_, kDrawFresh); !s) {
    harness_failure(s.error().message);
    return false;
  }
  int64_t call_no = job_.calls;
  CallReport fresh = call(Caller::kCandidate, inputs_, candidate_out_, false);
  if (!gate_call(fresh, "new values at the same addresses")) return false;
  CallReport fresh_base = call(Caller::kBaseline, inputs_, baseline_out_[0], false);
  if (!gate_call(fresh_base, "baseline")) return false;
  if (!check_against_baseline(candidate_out_, baseline_out_[0], {&baseline_first_},
                              poison_for_call(call_no), "new values at the same addresses",
                              gate::kFreshInputs)) {
    return false;
  }

  std::vector<int64_t> touched;
  if (auto s = perturb_inputs(inputs_, 1, &touched); !s) {
    harness_failure(s.error().message);
    return false;
  }
  call_no = job_.calls;
  CallReport perturbed = call(Caller::kCandidate, inputs_, candidate_out_, false);
  if (!gate_call(perturbed, "a few input values changed")) return false;
  CallReport perturbed_base = call(Caller::kBaseline, inputs_, baseline_first_, false);
  if (!gate_call(perturbed_base, "baseline")) return false;
  const std::string perturbed_phase = "after " + std::to_string(kPerturbedPerInput) +
                                      " elements of each input changed at the same addresses";
  if (!check_against_baseline(candidate_out_, baseline_first_, {&baseline_out_[0]},
                              poison_for_call(call_no), perturbed_phase, gate::kFreshInputs)) {
    return false;
  }
  tasks::ErrorStats perturbed_stats;
  if (!reference_check(inputs_, candidate_out_, poison_for_call(call_no), touched,
                       job_.seed ^ 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(index_),
                       perturbed_phase, gate::kCorrectness, &perturbed_stats)) {
    return false;
  }

  {
    TensorSet inputs2;
    TensorSet outputs2;
    TensorSet base2;
    const HostShares shares(job_.candidate);  // released before the three sets are freed
    const cudaStream_t hs = job_.env.harness_stream;
    Status s = inputs2.allocate(layout_, true, false, job_.env.guard_seed, &job_.next_band, hs);
    if (s) s = outputs2.allocate(layout_, false, true, job_.env.guard_seed, &job_.next_band, hs);
    if (s) s = base2.allocate(layout_, false, true, job_.env.guard_seed, &job_.next_band, hs);
    if (s) s = draw_inputs(inputs2, kDrawNewPointers);
    if (!s) {
      harness_failure(s.error().message);
      return false;
    }
    call_no = job_.calls;
    CallReport moved = call(Caller::kCandidate, inputs2, outputs2, false);
    if (!gate_call(moved, "new values at new addresses")) return false;
    CallReport moved_base = call(Caller::kBaseline, inputs2, base2, false);
    if (!gate_call(moved_base, "baseline")) return false;
    if (!check_against_baseline(outputs2, base2, {&baseline_first_, &baseline_out_[0]},
                                poison_for_call(call_no), "new values at new addresses",
                                gate::kFreshInputs)) {
      return false;
    }
  }
  job_.gates->pass(gate::kFreshInputs);

  // Work that shows up after everything returned (a background thread, a private stream).
  if (!check_work_after_calls()) return false;
  return result_->passed;
}

}  // namespace kiln::worker
