// parse_job_request: the shape of POST /v1/jobs, field by field.
#include "kiln/runner/job_request.h"

#include <gmock/gmock.h>

#include "runner_fixture.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;
using ::testing::HasSubstr;

FieldError rejected(const json& body) {
  auto parsed = parse_job_request(body, 600);
  EXPECT_TRUE(std::holds_alternative<FieldError>(parsed)) << body.dump().substr(0, 200);
  return std::holds_alternative<FieldError>(parsed) ? std::get<FieldError>(parsed) : FieldError{};
}

TEST(JobRequest, ReadsAWellFormedBody) {
  json body = job_body("pass", "", {"16x4096x4096"});
  body["limits"] = {{"job_seconds", 30}, {"min_samples", 5}};
  auto parsed = parse_job_request(body, 600);
  ASSERT_TRUE(std::holds_alternative<JobRequest>(parsed)) << std::get<FieldError>(parsed).text();
  const auto& request = std::get<JobRequest>(parsed);
  EXPECT_EQ(request.kind, JobKind::kBenchmark);
  EXPECT_EQ(request.task_name, "fp16_gemm");
  EXPECT_EQ(request.task_files.size(), 6u);  // tasks::bundle_files: fp16_gemm has a GPU reference
  EXPECT_EQ(request.workloads, (std::vector<std::string>{"16x4096x4096"}));
  EXPECT_EQ(request.limits.job_seconds, 30);
  EXPECT_EQ(request.limits.min_samples, 5);
  EXPECT_EQ(request.limits.max_samples, 200);
}

TEST(JobRequest, AnIncumbentIsForBenchmarksOnly) {
  json body = job_body("pass");
  body["incumbent"] = {{"source", "// best"}, {"sha256", std::string(64, 'a')}};
  auto parsed = parse_job_request(body, 600);
  ASSERT_TRUE(std::holds_alternative<JobRequest>(parsed)) << std::get<FieldError>(parsed).text();
  EXPECT_EQ(std::get<JobRequest>(parsed).incumbent_source, "// best");
  EXPECT_EQ(std::get<JobRequest>(parsed).incumbent_sha256, std::string(64, 'a'));

  body["kind"] = "verify";
  EXPECT_EQ(rejected(body).field, "incumbent");
  body["kind"] = "benchmark";
  body["incumbent"]["source"] = "";
  EXPECT_EQ(rejected(body).field, "incumbent.source");
  body["incumbent"] = {{"source", "// best"}, {"sha256", "short"}};
  EXPECT_EQ(rejected(body).field, "incumbent.sha256");
}

TEST(JobRequest, CapsJobSecondsAtTheServersMaximum) {
  json body = job_body("pass");
  body["limits"] = {{"job_seconds", 5000}};
  auto parsed = parse_job_request(body, 600);
  ASSERT_TRUE(std::holds_alternative<JobRequest>(parsed));
  EXPECT_EQ(std::get<JobRequest>(parsed).limits.job_seconds, 600);
  auto defaulted = parse_job_request(job_body("pass"), 90);
  EXPECT_EQ(std::get<JobRequest>(defaulted).limits.job_seconds, 90);
}

TEST(JobRequest, NamesTheFieldThatIsWrong) {
  EXPECT_EQ(rejected(json::array()).field, "");
  EXPECT_EQ(rejected(json{{"kind", "benchmark"}}).field, "task");
  json body = job_body("pass");
  body["task"]["sha256"] = std::string(64, 'A');
  EXPECT_EQ(rejected(body).field, "task.sha256");
  body = job_body("pass");
  body["task"]["files"]["task.json"] = 7;
  EXPECT_EQ(rejected(body).field, "task.files.task.json");
  body = job_body("pass");
  body["candidate"]["source"] = "";
  EXPECT_EQ(rejected(body).field, "candidate.source");
  body = job_body("pass");
  body["workloads"] = {"a", "a"};
  FieldError twice = rejected(body);
  EXPECT_EQ(twice.field, "workloads[1]");
  EXPECT_THAT(twice.message, HasSubstr("twice"));
  body = job_body("pass");
  body["limits"] = {{"target_rel_noise", 2}};
  EXPECT_EQ(rejected(body).field, "limits.target_rel_noise");
  body = job_body("pass");
  body["limits"] = {{"warp_speed", 9}};
  EXPECT_EQ(rejected(body).field, "limits.warp_speed");
}

TEST(JobRequest, RefusesBundlePathsThatLeaveTheBundle) {
  for (const char* name : {"../x", "/etc/passwd", "a//b", "a/./b", "a b", "", "dir/..", "x\ny"}) {
    json body = job_body("pass");
    body["task"]["files"][name] = "x";
    EXPECT_EQ(rejected(body).field, std::string("task.files.") + name) << name;
  }
}

TEST(JobRequest, ProfileNeedsAWorkloadAndSanitizeKnowsItsTools) {
  json profile = job_body("pass", "", {}, JobKind::kProfile);
  auto parsed = parse_job_request(profile, 600);
  ASSERT_TRUE(std::holds_alternative<JobRequest>(parsed));
  EXPECT_EQ(std::get<JobRequest>(parsed).profile_workload, "4096x4096x4096");
  profile.erase("profile");
  EXPECT_EQ(rejected(profile).field, "profile");

  json sanitize = job_body("pass");
  sanitize["kind"] = "sanitize";
  auto all = parse_job_request(sanitize, 600);
  ASSERT_TRUE(std::holds_alternative<JobRequest>(all));
  EXPECT_EQ(std::get<JobRequest>(all).sanitize_tools.size(), 4u);
  sanitize["sanitize"] = {{"tools", {"racecheck"}}, {"workload", "16x4096x4096"}};
  auto one = parse_job_request(sanitize, 600);
  ASSERT_TRUE(std::holds_alternative<JobRequest>(one));
  EXPECT_EQ(std::get<JobRequest>(one).sanitize_workload, "16x4096x4096");
  sanitize["sanitize"] = {{"tools", {"racecheck", "valgrind"}}};
  EXPECT_EQ(rejected(sanitize).field, "sanitize.tools[1]");
}

TEST(JobRequest, Sha256Hex) {
  EXPECT_TRUE(is_sha256_hex(std::string(64, 'a')));
  EXPECT_FALSE(is_sha256_hex(std::string(63, 'a')));
  EXPECT_FALSE(is_sha256_hex(std::string(64, 'g')));
  EXPECT_FALSE(is_sha256_hex(std::string(64, 'A')));
}

}  // namespace
}  // namespace kiln::runner
