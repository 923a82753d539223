// job_spec.h: job.json as the server writes it, and errors that name the field.
#include "kiln/worker/job_spec.h"

#include <gtest/gtest.h>

namespace kiln::worker {
namespace {

constexpr const char* kJob = R"({
  "id": "j-1", "kind": "benchmark", "task_dir": "/t/fp16_gemm", "candidate": "/j/kernel.cu",
  "build_dir": "/c/builds/abc", "workloads": ["4096x4096x4096"], "seed": 18446744073709551615,
  "limits": {"job_seconds": 300, "min_samples": 5, "max_samples": 50, "target_rel_noise": 0.01,
             "sample_time_cap_seconds": 7},
  "profile": {"workload": "4096x4096x4096"},
  "future_field": 1
})";

TEST(JobSpec, ParsesEveryField) {
  auto spec = JobSpec::parse(kJob);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->id, "j-1");
  EXPECT_EQ(spec->kind, JobKind::kBenchmark);
  EXPECT_EQ(spec->task_dir, "/t/fp16_gemm");
  EXPECT_EQ(spec->workloads, std::vector<std::string>{"4096x4096x4096"});
  EXPECT_EQ(spec->seed, 18446744073709551615ull);
  EXPECT_EQ(spec->limits.job_seconds, 300);
  EXPECT_EQ(spec->limits.min_samples, 5);
  EXPECT_EQ(spec->limits.max_samples, 50);
  EXPECT_EQ(spec->limits.target_rel_noise, 0.01);
  EXPECT_EQ(spec->limits.sample_time_cap_seconds, 7);
  EXPECT_EQ(spec->profile_workload, "4096x4096x4096");
}

TEST(JobSpec, AnIncumbentIsReadForABenchmarkOnly) {
  auto spec = JobSpec::parse(
      R"({"kind": "benchmark", "task_dir": "t", "candidate": "c", "build_dir": "b", "seed": 1,
          "incumbent": "/j/incumbent.cu", "incumbent_sha256": "abc"})");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->incumbent, "/j/incumbent.cu");
  EXPECT_EQ(spec->incumbent_sha256, "abc");
  auto verify = JobSpec::parse(
      R"({"kind": "verify", "task_dir": "t", "candidate": "c", "build_dir": "b", "seed": 1,
          "incumbent": "/j/incumbent.cu", "incumbent_sha256": "abc"})");
  ASSERT_FALSE(verify.ok());
  EXPECT_NE(verify.error().message.find("incumbent: is only for kind benchmark"), std::string::npos)
      << verify.error().message;
  auto unhashed = JobSpec::parse(
      R"({"kind": "benchmark", "task_dir": "t", "candidate": "c", "build_dir": "b", "seed": 1,
          "incumbent": "/j/incumbent.cu"})");
  ASSERT_FALSE(unhashed.ok());
  EXPECT_NE(unhashed.error().message.find("incumbent_sha256"), std::string::npos);
}

TEST(JobSpec, SanitizeDefaultsToEveryTool) {
  auto spec = JobSpec::parse(
      R"({"kind": "sanitize", "task_dir": "t", "candidate": "c", "build_dir": "b", "seed": 1})");
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(spec->sanitize_tools.size(), 4u);
  auto some = JobSpec::parse(
      R"({"kind": "sanitize", "task_dir": "t", "candidate": "c", "build_dir": "b", "seed": 1,
          "sanitize": {"tools": ["racecheck"], "workload": "w"}})");
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(some->sanitize_tools, std::vector<std::string>{"racecheck"});
  EXPECT_EQ(some->sanitize_workload, "w");
}

TEST(JobSpec, ErrorsNameTheField) {
  struct Case {
    const char* json;
    const char* field;
  };
  const Case cases[] = {
      {"[]", "not a JSON object"},
      {"{", "not a JSON object"},
      {R"({"kind": "bench", "task_dir": "t", "candidate": "c", "build_dir": "b", "seed": 1})",
       "kind"},
      {R"({"kind": "verify", "candidate": "c", "build_dir": "b", "seed": 1})", "task_dir"},
      {R"({"kind": "verify", "task_dir": "t", "candidate": "c", "build_dir": "b"})", "seed"},
      {R"({"kind": "verify", "task_dir": "t", "candidate": "c", "build_dir": "b", "seed": 1.5})",
       "seed"},
      {R"({"kind": "verify", "task_dir": "t", "candidate": "c", "build_dir": "b", "seed": 1, "workloads": "x"})",
       "workloads"},
      {R"({"kind": "verify", "task_dir": "t", "candidate": "c", "build_dir": "b", "seed": 1,
           "limits": {"min_samples": 0}})",
       "limits.min_samples"},
      {R"({"kind": "verify", "task_dir": "t", "candidate": "c", "build_dir": "b", "seed": 1,
           "limits": {"min_samples": 20, "max_samples": 10}})",
       "limits.max_samples"},
      {R"({"kind": "sanitize", "task_dir": "t", "candidate": "c", "build_dir": "b", "seed": 1,
           "sanitize": {"tools": ["leakcheck"]}})",
       "sanitize.tools"},
  };
  for (const auto& c : cases) {
    auto spec = JobSpec::parse(c.json);
    ASSERT_FALSE(spec.ok()) << c.json;
    EXPECT_NE(spec.error().message.find(c.field), std::string::npos) << spec.error().message;
  }
}

TEST(JobSpec, LoadNamesAMissingFile) {
  auto spec = JobSpec::load("/nonexistent/job.json");
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.error().message.find("/nonexistent/job.json"), std::string::npos);
}

}  // namespace
}  // namespace kiln::worker
