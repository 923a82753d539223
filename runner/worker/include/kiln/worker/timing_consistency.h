// Whether a gated call's timing evidence agrees with itself. CUPTI runs in the candidate's own
// process, so the candidate can switch its records off; two clocks it cannot switch off
// without breaking its own answer stand beside it (launch_gate.h):
//   - the CUDA events on the launch stream, recorded while the launch gate still holds the
//     GPU, so they time the GPU work between the gate and the stop event and nothing of the
//     host. CUPTI's span of the same window must account for them: more event time than
//     span beyond kEventMarginUs + kEventSlack * span is work CUPTI did not record
//     (activity_record);
//   - the gate itself: it fills the GPU while kiln_launch runs, so no other work of the
//     process can run then (a hold that could not fill the GPU found work already running),
//     and its tail probe completes only once the whole GPU was free: a tail longer than
//     kTailMarginUs is work the launch stream did not wait for, still running after the
//     call (hidden_stream_work).
// The margins cover the fixed latencies between the events and the kernels they bracket; the
// H200's figures are in runner/worker/README.md ("Timing that cannot be switched off").
#pragma once

#include <string>
#include <vector>

namespace kiln::worker {

struct TimingEvidence {
  double event_us = 0;    // CUDA events: after the hold to the call's last launch-stream work
  double span_us = 0;     // CUPTI: first to last recorded GPU work of the window
  int gpu_records = 0;    // CUPTI's GPU records in the window
  bool recorded = false;  // CUPTI recorded the window (its own markers are all there)
  double tail_us = 0;     // the stop event to the tail probe's end
  bool filled = true;     // the hold ran on every SM at once before kiln_launch was called
  bool probe_timed_out = false;
};

struct TimingVerdict {
  std::string unrecorded_work;           // activity_record's finding; empty when consistent
  std::vector<std::string> unseen_work;  // hidden_stream_work's findings
};

inline constexpr double kQuietEventUs = 5;    // events around a call that launched nothing
inline constexpr double kEventMarginUs = 15;  // events beyond the span, fixed part
inline constexpr double kEventSlack = 0.01;   // events beyond the span, part of the span
inline constexpr double kTailMarginUs = 25;   // the probe after an idle launch stream

TimingVerdict judge_timing(const TimingEvidence& evidence);

// The verifier's own clock against the host's reports, over one workload's timed calls. The
// host reports each call's GPU span, and its address space is the candidate's: a candidate
// that writes the host's memory can report less GPU time than it used, which neither the
// events nor the tail probe (both the host's too) can refute. The verifier times every round
// trip itself; less the reported span, that is the window's own cost around the GPU work
// (gate, launch, synchronize, the messages; for a call, the completion seal too). Probe calls
// measured that cost before the candidate's library was opened (candidate_host_protocol.h), so a
// median cost beyond the probes' by more than kRoundTripMarginUs + kRoundTripSlack * span is GPU
// time the reports left out, or host time spent inside kiln_launch; either fails candidate_process.
// A forged report can still hide up to that allowance, plus what a hostile host saves of the
// window's own cost (runner/worker/README.md, "Threat model").
struct RoundTripVerdict {
  double probe_us = 0;    // median over the probes: round trip less the reported span
  double call_us = 0;     // the same over the candidate's timed calls
  double seal_us = 0;     // what the completion seal adds to each call (timing_pass.cpp)
  double excess_us = 0;   // call_us - probe_us
  double allowed_us = 0;  // the excess the margins allow at this span, the seal's cost with it
  std::string finding;    // candidate_process's; empty when the clocks agree
};

// The margins leave about twice the largest honest excess the H200 showed (2026-12-03, two runs
// of the worker's GPU tests, the zoo's fp16 GEMMs and the starters: up to 1.96 ms, at spans
// from 3 us to 104 ms; 2026-12-04, with the host's flush off the clock and the seal on it: up to
// 1.77 ms; the window's own cost moves by about that much between jobs, for reasons not yet
// found), so the bound is wide: runner/worker/README.md, "The verifier's clock".
inline constexpr int kRoundTripProbes = 24;         // probe calls per candidate host
inline constexpr double kRoundTripMarginUs = 4000;  // excess allowed, fixed part
inline constexpr double kRoundTripSlack = 0.10;     // excess allowed, part of the span

// The completion seal's cost as judge_round_trip allows it: `measured_us` (the least of the
// verifier's own copies of the outputs) capped at their `bytes` read and written at
// kSealBandwidthShare of the HBM's peak `hbm_gbps`, plus kSealFixedUs for a launch and a
// synchronize; uncapped when the peak is unknown (0). Work of the candidate's left running
// while the verifier calibrates would slow its copies; the cap keeps that from widening the
// allowance.
inline constexpr double kSealFixedUs = 30;
inline constexpr double kSealBandwidthShare = 0.5;
double seal_allowance_us(double measured_us, double bytes, double hbm_gbps);

// `call_overhead_us`: per timed call, the verifier's round trip less the reported span;
// `span_us`: the median reported span; `seal_us`: the completion seal's cost, which the calls'
// round trips carry and the probes' do not. No finding without probes or calls.
RoundTripVerdict judge_round_trip(const std::vector<double>& probe_overhead_us,
                                  const std::vector<double>& call_overhead_us, double span_us,
                                  double seal_us = 0);

}  // namespace kiln::worker
