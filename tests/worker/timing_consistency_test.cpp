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

}  // namespace
}  // namespace kiln::worker
