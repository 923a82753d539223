#include "kiln/worker/timing_consistency.h"

#include <algorithm>
#include <cstdio>

#include "kiln/worker/sample_statistics.h"

namespace kiln::worker {

namespace {

std::string us(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f us", v);
  return buffer;
}

}  // namespace

TimingVerdict judge_timing(const TimingEvidence& e) {
  TimingVerdict v;
  if (e.recorded) {
    const bool none = e.gpu_records == 0 && e.event_us > kQuietEventUs;
    const double allowed = e.span_us * (1 + kEventSlack) + kEventMarginUs;
    if (none || e.event_us > allowed) {
      v.unrecorded_work = "CUDA events timed " + us(e.event_us) +
                          " of GPU work on the launch stream, the activity record " +
                          (none ? std::string("none at all")
                                : us(e.span_us) + " (at most " + us(allowed) + " is latency)") +
                          ": work ran that CUPTI did not record (switched off around a launch?)";
    }
  }
  if (!e.filled) {
    v.unseen_work.push_back(
        "the GPU was busy with other work of the process when the call began (the launch gate "
        "could not fill every SM): work left running by an earlier call or started by another "
        "thread");
  }
  if (e.probe_timed_out) {
    v.unseen_work.push_back(
        "after the call's last launch-stream work the GPU did not become free within the tail "
        "probe's timeout: work the launch stream did not wait for kept running");
  } else if (e.tail_us > kTailMarginUs) {
    v.unseen_work.push_back("work the launch stream did not wait for ran on for " + us(e.tail_us) +
                            " after the call's last launch-stream work (at most " +
                            us(kTailMarginUs) +
                            " is latency): enqueue everything on the given stream, or make it wait "
                            "for what you start elsewhere");
  }
  return v;
}

double seal_allowance_us(double measured_us, double bytes, double hbm_gbps) {
  if (hbm_gbps <= 0) return measured_us;
  const double cap_us = kSealFixedUs + 2 * bytes / (kSealBandwidthShare * hbm_gbps * 1e3);
  return std::min(measured_us, cap_us);
}

RoundTripVerdict judge_round_trip(const std::vector<double>& probe_overhead_us,
                                  const std::vector<double>& call_overhead_us, double span_us,
                                  double seal_us) {
  RoundTripVerdict v;
  if (probe_overhead_us.empty() || call_overhead_us.empty()) return v;
  v.probe_us = SampleStatistics::median(probe_overhead_us);
  v.call_us = SampleStatistics::median(call_overhead_us);
  v.seal_us = seal_us;
  v.excess_us = v.call_us - v.probe_us;
  v.allowed_us = kRoundTripMarginUs + kRoundTripSlack * span_us + seal_us;
  if (v.excess_us > v.allowed_us) {
    v.finding = "the verifier's clock timed each call's round trip at " + us(v.call_us) +
                " beyond the GPU time the candidate's process reported (median), the harness's "
                "empty calls at " +
                us(v.probe_us) + ": " + us(v.excess_us) + " per call is unaccounted for (at most " +
                us(v.allowed_us) +
                " is allowed). Either the process reported less GPU time than its calls used "
                "(or said its work was done before it was), or kiln_launch spends that long on "
                "the host per call (do host-side set-up once, not in every call)";
  }
  return v;
}

}  // namespace kiln::worker
