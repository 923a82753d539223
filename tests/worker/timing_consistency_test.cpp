#include "kiln/worker/timing_consistency.h"

#include <gtest/gtest.h>

namespace kiln::worker {
namespace {

TimingEvidence honest(double span_us) {
  TimingEvidence e;
  e.span_us = span_us;
  e.event_us = span_us + 3;  // the fixed latency around a gated call
  e.gpu_records = 2;
  e.recorded = true;
  e.tail_us = 6;
  return e;
}

TEST(TimingConsistency, AnHonestCallOfAnyLengthIsConsistent) {
  for (double span : {3.3, 15.0, 180.0, 5000.0}) {
    SCOPED_TRACE(span);
    const TimingVerdict v = judge_timing(honest(span));
    EXPECT_TRUE(v.unrecorded_work.empty()) << v.unrecorded_work;
    EXPECT_TRUE(v.unseen_work.empty());
  }
}

TEST(TimingConsistency, AKernelHiddenFromTheRecordBesideADecoyIsUnrecordedWork) {
  // A 200 us GEMM with its records off and a 150 us decoy in view: the old margin (twice the
  // span plus 100 us) let it pass.
  TimingEvidence e = honest(150);
  e.event_us = 353;
  const TimingVerdict v = judge_timing(e);
  EXPECT_NE(v.unrecorded_work.find("work ran that CUPTI did not record"), std::string::npos)
      << v.unrecorded_work;
  EXPECT_NE(v.unrecorded_work.find("353.0 us"), std::string::npos) << v.unrecorded_work;
}

TEST(TimingConsistency, EventTimeWithNoRecordAtAllIsUnrecordedWork) {
  TimingEvidence e = honest(0);
  e.gpu_records = 0;
  e.event_us = 40;
  EXPECT_NE(judge_timing(e).unrecorded_work.find("none at all"), std::string::npos);
  e.event_us = 2;  // a call that launched nothing: the events' own latency
  EXPECT_TRUE(judge_timing(e).unrecorded_work.empty());
}

TEST(TimingConsistency, TheMarginGrowsWithTheSpanButOnlyByItsSlack) {
  TimingEvidence e = honest(1000);
  e.event_us = 1000 * (1 + kEventSlack) + kEventMarginUs - 1;
  EXPECT_TRUE(judge_timing(e).unrecorded_work.empty());
  e.event_us = 1000 * (1 + kEventSlack) + kEventMarginUs + 1;
  EXPECT_FALSE(judge_timing(e).unrecorded_work.empty());
}

TEST(TimingConsistency, WithoutARecordTheEventsAreNotComparedButTheTailStillIs) {
  // activity_record judges a window CUPTI lost (its markers missing) on its own.
  TimingEvidence e = honest(10);
  e.recorded = false;
  e.event_us = 500;
  e.tail_us = 300;
  const TimingVerdict v = judge_timing(e);
  EXPECT_TRUE(v.unrecorded_work.empty());
  ASSERT_EQ(v.unseen_work.size(), 1u);
  EXPECT_NE(v.unseen_work[0].find("300.0 us"), std::string::npos) << v.unseen_work[0];
}

TEST(TimingConsistency, WorkStillRunningAfterTheLaunchStreamIsUnseenWork) {
  TimingEvidence e = honest(40);
  e.tail_us = 160;  // a GEMM on a private stream outlived the 40 us decoy
  const TimingVerdict v = judge_timing(e);
  EXPECT_TRUE(v.unrecorded_work.empty());
  ASSERT_EQ(v.unseen_work.size(), 1u);
  EXPECT_NE(v.unseen_work[0].find("did not wait for"), std::string::npos);
  e.tail_us = kTailMarginUs;  // the latency of the probe itself
  EXPECT_TRUE(judge_timing(e).unseen_work.empty());
}

TEST(TimingConsistency, AGpuTheGateCouldNotFillOrAProbeThatGaveUpIsUnseenWork) {
  TimingEvidence e = honest(40);
  e.filled = false;
  e.probe_timed_out = true;
  const TimingVerdict v = judge_timing(e);
  ASSERT_EQ(v.unseen_work.size(), 2u);
  EXPECT_NE(v.unseen_work[0].find("could not fill every SM"), std::string::npos);
  EXPECT_NE(v.unseen_work[1].find("timeout"), std::string::npos);
}

// The round trip: probes cost about 240 us around their GPU work on the verifier's clock.
std::vector<double> probes() { return {236, 241, 239, 250, 244, 238, 242, 260}; }

TEST(RoundTrip, AnHonestCandidatesCallsCostWhatTheProbesDidPlusItsLaunches) {
  // The candidate's kiln_launch adds a few microseconds of launches on the host.
  const RoundTripVerdict v = judge_round_trip(probes(), {251, 248, 262, 249, 255}, 1300);
  EXPECT_TRUE(v.finding.empty()) << v.finding;
  EXPECT_DOUBLE_EQ(v.probe_us, 241.5);
  EXPECT_DOUBLE_EQ(v.call_us, 251);
  EXPECT_DOUBLE_EQ(v.excess_us, 9.5);
  EXPECT_DOUBLE_EQ(v.allowed_us, kRoundTripMarginUs + kRoundTripSlack * 1300);
}

TEST(RoundTrip, AReportedSpanWellBelowTheTruthIsCaughtByTheVerifiersClock) {
  // A 12.7 ms GEMM whose process reports 40% of its GPU time: 7.6 ms of each round trip is
  // then unaccounted for, beyond the allowance (4 ms + 10% of the 5.1 ms reported).
  std::vector<double> calls;
  for (double cost : {243.0, 249.0, 240.0, 251.0}) calls.push_back(cost + 0.6 * 12700);
  const RoundTripVerdict v = judge_round_trip(probes(), calls, 0.4 * 12700);
  ASSERT_FALSE(v.finding.empty());
  EXPECT_GT(v.excess_us, v.allowed_us);
  EXPECT_NE(v.finding.find("reported less GPU time"), std::string::npos) << v.finding;
  EXPECT_NE(v.finding.find("kiln_launch"), std::string::npos) << v.finding;
}

TEST(RoundTrip, TheLargestHonestExcessSeenOnTheH200Passes) {
  // 2026-12-03: 1.96 ms beyond the probes at a 3.3 ms span, 1.82 ms at 0.56 ms, 2.1 ms at 104 ms.
  EXPECT_TRUE(judge_round_trip({2068}, {2068 + 1962}, 3325).finding.empty());
  EXPECT_TRUE(judge_round_trip({2140}, {2140 + 1819}, 556).finding.empty());
  EXPECT_TRUE(judge_round_trip({1746}, {1746 + 2105}, 103862).finding.empty());
}

TEST(RoundTrip, TheMedianIgnoresAFewSlowRoundTrips) {
  // A busy host machine delays a few messages by milliseconds: not a finding.
  const RoundTripVerdict v = judge_round_trip(probes(), {250, 2600, 247, 251, 3900, 249, 252}, 40);
  EXPECT_TRUE(v.finding.empty()) << v.finding;
  EXPECT_DOUBLE_EQ(v.call_us, 251);
}

TEST(RoundTrip, ExcessJustBeyondTheAllowanceFailsAndJustWithinPasses) {
  const double allowed = kRoundTripMarginUs + kRoundTripSlack * 200;
  EXPECT_TRUE(judge_round_trip({100}, {100 + allowed - 1}, 200).finding.empty());
  EXPECT_FALSE(judge_round_trip({100}, {100 + allowed + 1}, 200).finding.empty());
}

TEST(RoundTrip, TheSealsCostIsAllowedBesideTheMarginsAndNoMore) {
  // Each call's round trip carries the completion seal's copy (the probes' do not): allowed in
  // full, so an honest kernel with large outputs is not failed for it, and no more, so an early
  // answer that lets work run on past the copy's worth still fails.
  const double seal = 900;
  const double allowed = kRoundTripMarginUs + kRoundTripSlack * 200 + seal;
  const RoundTripVerdict within = judge_round_trip({100}, {100 + allowed - 1}, 200, seal);
  EXPECT_TRUE(within.finding.empty()) << within.finding;
  EXPECT_DOUBLE_EQ(within.seal_us, seal);
  EXPECT_DOUBLE_EQ(within.allowed_us, allowed);
  const RoundTripVerdict beyond = judge_round_trip({100}, {100 + allowed + 1}, 200, seal);
  ASSERT_FALSE(beyond.finding.empty());
  EXPECT_NE(beyond.finding.find("before it was"), std::string::npos) << beyond.finding;
}

TEST(RoundTrip, TheSealsAllowanceIsItsMeasuredCostCappedByTheBytesItMoves) {
  // 32 MiB of fp16 outputs on a 4800 GB/s part: the H200's copies took about 30 us (2026-12-04),
  // under the cap of 30 us + 2 * 32 MiB at 2400 GB/s (58 us), so the measurement stands.
  const double bytes = 32.0 * (1 << 20);
  EXPECT_DOUBLE_EQ(seal_allowance_us(30, bytes, 4800), 30);
  // Copies slowed by work left running beside them are not allowed beyond the cap.
  const double cap = kSealFixedUs + 2 * bytes / (kSealBandwidthShare * 4800 * 1e3);
  EXPECT_NEAR(cap, 57.96, 0.01);
  EXPECT_DOUBLE_EQ(seal_allowance_us(5000, bytes, 4800), cap);
  // Without the GPU's peak there is no cap to apply.
  EXPECT_DOUBLE_EQ(seal_allowance_us(5000, bytes, 0), 5000);
}

TEST(RoundTrip, NoProbesOrNoCallsJudgesNothing) {
  EXPECT_TRUE(judge_round_trip({}, {5000}, 10).finding.empty());
  EXPECT_TRUE(judge_round_trip(probes(), {}, 10).finding.empty());
}

}  // namespace
}  // namespace kiln::worker
