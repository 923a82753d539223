// The timing pass (workload_session.h, steps 4-5): interleaved candidate/baseline sample
// pairs (triples with the incumbent) on inputs redrawn before each, until the stopping
// criterion; then one more check against both references.
//
// The completion seal: a timed hosted call's outputs are copied, on the verifier's harness
// stream, into buffers no host can reach (sealed_candidate_, sealed_incumbent_) as soon as the
// host says its GPU work is done, and the verifier's clock of the round trip stops only when
// the copy has finished. The comparison with the baseline reads the sealed copy. So a host that
// answers early and lets part of the work run on (on a private stream, say, while the baseline
// runs) gains nothing: that work either lands before the copy, and its time is on the clock
// (judge_round_trip), or it is missing from what is compared (correctness).
#include <algorithm>
#include <chrono>

#include "kiln/worker/throttle_policy.h"
#include "kiln/worker/timing_consistency.h"
#include "workload_session.h"

namespace kiln::worker {

namespace {

constexpr int64_t kWarmupPairs = 1;  // the first timed pair only warms clocks and caches
constexpr int kSealCalibrations = 3;

}  // namespace

bool WorkloadSession::timing_pass(const StoppingLimits& limits) {
  progress("timing: allocating");
  if (auto s = allocate(true); !s) {
    harness_failure(s.error().message);
    return false;
  }
  const StoppingCriterion criterion(limits);
  std::vector<double> candidate_us;
  std::vector<double> baseline_us;
  std::vector<double> event_us;
  std::vector<double> incumbent_us;
  // The gated calls' own consistency (timing_consistency.h), reported so its margins can be
  // checked against what honest kernels show.
  std::vector<double> candidate_excess_us, candidate_tail_us, baseline_excess_us, baseline_tail_us;
  // The verifier's clock of each candidate round trip less the span its process reported
  // (judge_round_trip).
  std::vector<double> round_trip_overhead_us;
  const bool with_incumbent = job_.incumbent != nullptr;
  auto seal_us = seal_cost_us();
  if (!seal_us) {
    harness_failure(seal_us.error().message);
    return false;
  }
  int64_t discarded = 0;
  bool clocks_unseen = false;  // NVML answered not ok for some sample
  const auto start = std::chrono::steady_clock::now();
  StopReason reason = StopReason::kContinue;
  if (with_incumbent) {
    // The incumbent's first call of a workload in its process loads the kernels it uses (CUDA's
    // lazy loading waits for the device): untimed here, as the candidate's first calls were in
    // the verify pass, so no timed sample holds a load.
    if (auto s = draw_inputs(inputs_, kDrawTimingBase); !s) {
      harness_failure(s.error().message);
      return false;
    }
    CallReport warm = call(Caller::kIncumbent, inputs_, incumbent_out_, false);
    if (!judge_incumbent([&] { return gate_call(warm, "the incumbent's first call"); }))
      return false;
  }
  int64_t pair = 1;
  int last = 0;
  for (;; ++pair) {
    if (auto s = draw_inputs(inputs_, kDrawTimingBase + static_cast<uint64_t>(pair)); !s) {
      harness_failure(s.error().message);
      return false;
    }
    const int64_t call_no = job_.calls;
    const std::string phase = "timed sample " + std::to_string(pair);
    CallReport c = call(Caller::kCandidate, inputs_, candidate_out_, true, &sealed_candidate_);
    if (!gate_call(c, phase)) return false;
    // The incumbent second: the candidate still runs while no answer for these inputs exists.
    const int64_t incumbent_call_no = job_.calls;
    CallReport i;
    if (with_incumbent) {
      i = call(Caller::kIncumbent, inputs_, incumbent_out_, true, &sealed_incumbent_);
      if (!judge_incumbent([&] { return gate_call(i, phase); })) return false;
    }
    last = static_cast<int>(pair & 1);
    CallReport b = call(Caller::kBaseline, inputs_, baseline_out_[last], true);
    if (!gate_call(b, "baseline")) return false;
    std::vector<const TensorSet*> earlier;
    if (pair > 1) earlier.push_back(&baseline_out_[last ^ 1]);
    const std::string sealed =
        phase + " (the outputs as they were when the process said the call's GPU work was done)";
    if (!check_against_baseline(sealed_candidate_, baseline_out_[last], earlier,
                                poison_for_call(call_no), sealed, gate::kCorrectness)) {
      return false;
    }
    if (with_incumbent && !judge_incumbent([&] {
          return check_against_baseline(sealed_incumbent_, baseline_out_[last], earlier,
                                        poison_for_call(incumbent_call_no), sealed,
                                        gate::kCorrectness);
        })) {
      return false;
    }
    bool keep = pair > kWarmupPairs;
    if (job_.nvml != nullptr && job_.nvml->available()) {
      const NvmlSample sample = job_.nvml->sample();
      if (!sample.ok) clocks_unseen = true;
      for (const auto& name : ThrottlePolicy::names(sample.reasons)) {
        if (name != "gpu_idle") job_.gpu->throttle_reasons_seen.insert(name);
      }
      if (ThrottlePolicy::discards(sample.reasons)) {
        ++discarded;
        keep = false;
      } else if (keep && sample.ok) {
        job_.gpu->sm_clock_mhz.push_back(sample.sm_clock_mhz);
      }
    }
    candidate_excess_us.push_back(c.event_us - c.span_us);
    candidate_tail_us.push_back(c.tail_us);
    baseline_excess_us.push_back(b.event_us - b.span_us);
    baseline_tail_us.push_back(b.tail_us);
    if (keep) {
      round_trip_overhead_us.push_back(c.wall_us - c.span_us);
      candidate_us.push_back(c.span_us);
      baseline_us.push_back(b.span_us);
      event_us.push_back(c.event_us);
      if (with_incumbent) incumbent_us.push_back(i.span_us);
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::vector<const std::vector<double>*> series{&candidate_us, &baseline_us};
    if (with_incumbent) series.push_back(&incumbent_us);
    reason = criterion.decide(series, elapsed);
    if (pair % 10 == 0) {
      progress("timing: " + std::to_string(candidate_us.size()) + " samples, noise " +
               std::to_string(StoppingCriterion::relative_noise(candidate_us)));
    }
    if (reason != StopReason::kContinue) break;
  }
  job_.gates->pass(gate::kCorrectness);
  if (job_.nvml == nullptr || !job_.nvml->available())
    job_.gates->not_run(gate::kClockMonitoring,
                        "NVML is unavailable, so throttled samples could not be seen and dropped");
  else if (clocks_unseen)
    job_.gates->not_run(gate::kClockMonitoring, "NVML did not answer for every timed sample");
  else
    job_.gates->pass(gate::kClockMonitoring);
  job_.gpu->samples_discarded_throttled += discarded;
  result_->samples_discarded_throttled = discarded;
  result_->stop_reason = stop_reason_name(reason);
  if (candidate_us.empty()) {
    fail(gate::kCorrectness, "no usable timing samples (all " + std::to_string(discarded) +
                                 " were taken while the GPU was throttled); run the job again");
    return false;
  }
  result_->time_us = SampleStatistics::summarize(candidate_us);
  result_->baseline_time_us = SampleStatistics::summarize(baseline_us);
  result_->event_time_us = SampleStatistics::summarize(event_us);
  auto spread = [](const std::vector<double>& v) {
    return nlohmann::json{{"median", SampleStatistics::summarize(v).median},
                          {"max", v.empty() ? 0.0 : *std::max_element(v.begin(), v.end())}};
  };
  result_->extra["timing_checks_us"] = {{"candidate_event_excess", spread(candidate_excess_us)},
                                        {"candidate_tail", spread(candidate_tail_us)},
                                        {"baseline_event_excess", spread(baseline_excess_us)},
                                        {"baseline_tail", spread(baseline_tail_us)}};
  const RoundTripVerdict round_trip = judge_round_trip(
      job_.candidate != nullptr ? job_.candidate->probe_overhead_us() : std::vector<double>(),
      round_trip_overhead_us, result_->time_us->median, *seal_us);
  result_->extra["timing_checks_us"]["round_trip"] = {{"probe_overhead", round_trip.probe_us},
                                                      {"call_overhead", round_trip.call_us},
                                                      {"seal", round_trip.seal_us},
                                                      {"excess", round_trip.excess_us},
                                                      {"allowed", round_trip.allowed_us}};
  if (!round_trip.finding.empty()) {
    fail(gate::kCandidateProcess, round_trip.finding);
    return false;
  }
  result_->speedup = result_->time_us->median > 0
                         ? result_->baseline_time_us->median / result_->time_us->median
                         : 0;
  if (with_incumbent) {
    result_->incumbent_time_us = SampleStatistics::summarize(incumbent_us);
    result_->speedup_vs_incumbent =
        result_->time_us->median > 0 ? result_->incumbent_time_us->median / result_->time_us->median
                                     : 0;
  }
  std::string dtype;
  for (const auto& t : layout_.tensors) {
    if (!t.is_output) {
      dtype = tasks::dtype_name(t.dtype);
      break;
    }
  }
  result_->throughput = PeakTable::throughput(
      layout_.flops, layout_.bytes, result_->time_us->median * 1e-6, dtype, job_.gpu->peak);

  // After timing: a few inputs changed at the same addresses, against both references.
  progress("timing: final check");
  std::vector<int64_t> touched;
  if (auto s = perturb_inputs(inputs_, 2, &touched); !s) {
    harness_failure(s.error().message);
    return false;
  }
  const int64_t call_no = job_.calls;
  CallReport after = call(Caller::kCandidate, inputs_, candidate_out_, false);
  if (!gate_call(after, "after timing")) return false;
  CallReport after_base = call(Caller::kBaseline, inputs_, baseline_out_[last ^ 1], false);
  if (!gate_call(after_base, "baseline")) return false;
  const std::string phase = "after timing, with a few input values changed";
  if (!check_against_baseline(candidate_out_, baseline_out_[last ^ 1], {&baseline_out_[last]},
                              poison_for_call(call_no), phase, gate::kFreshInputs)) {
    return false;
  }
  tasks::ErrorStats stats;
  if (!reference_check(inputs_, candidate_out_, poison_for_call(call_no), touched,
                       job_.seed ^ 0x5851f42d4c957f2dull ^ static_cast<uint64_t>(index_), phase,
                       gate::kCorrectness, &stats)) {
    return false;
  }
  result_->extra["after_timing_errors"] = {
      {"max_abs", stats.max_abs}, {"max_rel", stats.max_rel}, {"mismatches", stats.mismatches}};
  return result_->passed;
}

Result<double> WorkloadSession::seal_cost_us() {
  double least = 0;
  for (int i = 0; i < kSealCalibrations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    if (auto s = copy_outputs(candidate_out_, sealed_candidate_); !s) return s.error();
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    least = i == 0 ? us : std::min(least, us);
  }
  const double hbm_gbps = job_.gpu != nullptr && job_.gpu->peak ? job_.gpu->peak->hbm_gbps : 0;
  double bytes = 0;
  for (size_t t = 0; t < layout_.tensors.size(); ++t) {
    if (const GuardedBuffer* b = candidate_out_.at(t); layout_.tensors[t].is_output && b != nullptr)
      bytes += static_cast<double>(b->bytes());
  }
  return seal_allowance_us(least, bytes, hbm_gbps);
}

}  // namespace kiln::worker
