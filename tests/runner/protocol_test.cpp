// kiln_runner_protocol: the names, bounds and lists the server and the worker share.
#include "kiln/runner/protocol/protocol.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kiln/runner/job_state.h"

namespace kiln::runner::protocol {
namespace {

TEST(Protocol, KindNamesRoundTrip) {
  std::set<std::string_view> names;
  for (JobKind kind : kJobKinds) {
    names.insert(kind_name(kind));
    EXPECT_EQ(parse_kind(kind_name(kind)), kind) << kind_name(kind);
    EXPECT_NE(kJobKindChoices.find(kind_name(kind)), std::string_view::npos) << kind_name(kind);
  }
  EXPECT_EQ(names.size(), kJobKinds.size());
  EXPECT_EQ(kind_name(JobKind::kBenchmark), "benchmark");
  static_assert(parse_kind("sanitize") == JobKind::kSanitize);
}

TEST(Protocol, RejectsUnknownKinds) {
  for (const char* name : {"", "bench", "Benchmark", "verify ", "profiles", "?"})
    EXPECT_EQ(parse_kind(name), std::nullopt) << name;
}

TEST(Protocol, ServerAndWorkerSpellTheSameKind) {
  // kiln::runner::JobKind is the protocol's type, not a copy with the same enumerators.
  static_assert(std::is_same_v<runner::JobKind, JobKind>);
  EXPECT_EQ(runner::kind_name(runner::JobKind::kProfile), "profile");
}

TEST(Protocol, DefaultLimitsAreWithinTheirBounds) {
  EXPECT_TRUE(within_bounds(JobLimits{}));
  static_assert(within_bounds(JobLimits{}));
}

TEST(Protocol, LimitBoundsExcludeZeroTimesAndIncludeTheirMaximum) {
  EXPECT_FALSE(kJobSecondsBound.contains(0));
  EXPECT_TRUE(kJobSecondsBound.contains(0.5));
  EXPECT_TRUE(kJobSecondsBound.contains(86400));
  EXPECT_FALSE(kJobSecondsBound.contains(86400.5));
  EXPECT_FALSE(kTargetRelNoiseBound.contains(0));
  EXPECT_TRUE(kTargetRelNoiseBound.contains(1));
  EXPECT_FALSE(kTargetRelNoiseBound.contains(1.01));
  EXPECT_FALSE(kMinSamplesBound.contains(0));
  EXPECT_TRUE(kMinSamplesBound.contains(1));
  EXPECT_TRUE(kMaxSamplesBound.contains(kMaxSamplesBound.max));
  EXPECT_FALSE(kMaxSamplesBound.contains(kMaxSamplesBound.max + 1));
}

TEST(Protocol, LimitsNeedMaxSamplesAtLeastMinSamples) {
  JobLimits limits;
  limits.min_samples = 20;
  limits.max_samples = 10;
  EXPECT_FALSE(within_bounds(limits));
  limits.max_samples = 20;
  EXPECT_TRUE(within_bounds(limits));
  limits.sample_time_cap_seconds = 0;
  EXPECT_FALSE(within_bounds(limits));
}

TEST(Protocol, SanitizeToolsAreTheFourComputeSanitizerTools) {
  EXPECT_EQ(all_sanitize_tools(),
            (std::vector<std::string>{"memcheck", "racecheck", "synccheck", "initcheck"}));
  for (auto tool : kSanitizeTools) {
    EXPECT_TRUE(is_sanitize_tool(tool)) << tool;
    EXPECT_NE(kSanitizeToolChoices.find(tool), std::string_view::npos) << tool;
  }
  for (const char* other : {"", "leakcheck", "valgrind", "Memcheck"})
    EXPECT_FALSE(is_sanitize_tool(other)) << other;
}

TEST(Protocol, NamesTheWorkerStagesAndNotTheServersStart) {
  for (auto stage : kWorkerStages) EXPECT_TRUE(is_worker_stage(stage)) << stage;
  EXPECT_FALSE(is_worker_stage(kStartStage));
  EXPECT_FALSE(is_worker_stage("warp"));
}

}  // namespace
}  // namespace kiln::runner::protocol
