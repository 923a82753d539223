#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "bundle_fixture.h"
#include "kiln/tasks/task.h"

namespace kiln::tasks {
namespace {

using ::testing::HasSubstr;

nlohmann::json fp16_gemm_contract() {
  auto task = load_task(testing::bundled_tasks_dir() / "fp16_gemm");
  EXPECT_TRUE(task) << task.error().message;
  return task ? to_json(*task) : nlohmann::json{};
}

TEST(TaskJson, HasEveryFieldOfTheContract) {
  const auto json = fp16_gemm_contract();
  for (const char* key :
       {"name", "title", "description", "arch", "dims", "signature", "entry_point",
        "input_distribution", "workloads", "sim_workloads", "tolerance", "flops", "bytes",
        "baseline", "scoring", "banned_symbols", "rules", "files", "sha256"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
}

TEST(TaskJson, ListsSignatureInAbiOrder) {
  const auto signature = fp16_gemm_contract()["signature"];
  ASSERT_EQ(signature["inputs"].size(), 2u);
  EXPECT_EQ(signature["inputs"][0]["name"], "A");
  EXPECT_EQ(signature["inputs"][1]["name"], "B");
  EXPECT_EQ(signature["inputs"][1]["shape"], nlohmann::json({"N", "K"}));
  ASSERT_EQ(signature["outputs"].size(), 1u);
  EXPECT_EQ(signature["outputs"][0]["name"], "C");
  EXPECT_EQ(signature["outputs"][0]["dtype"], "f16");
  EXPECT_TRUE(signature["scalars"].empty());
}

TEST(TaskJson, GivesEveryWorkloadItsNameAndDims) {
  const auto json = fp16_gemm_contract();
  ASSERT_EQ(json["workloads"].size(), 10u);
  const auto& last = json["workloads"][9];
  EXPECT_EQ(last["name"], "4000x3000x2000");
  EXPECT_EQ(last["M"], 4000);
  EXPECT_EQ(last["N"], 3000);
  EXPECT_EQ(last["K"], 2000);
  EXPECT_EQ(json["sim_workloads"][2]["N"], 17);
}

TEST(TaskJson, StatesScoringAndTheFailureRule) {
  const auto scoring = fp16_gemm_contract()["scoring"];
  EXPECT_THAT(scoring["rule"].get<std::string>(),
              HasSubstr("geometric mean of baseline_time / candidate_time"));
  EXPECT_THAT(scoring["rule"].get<std::string>(),
              HasSubstr("one failed workload fails the candidate"));
}

TEST(TaskJson, GivesFilesRelativeToTheBundle) {
  const auto files = fp16_gemm_contract()["files"];
  EXPECT_EQ(files["reference"], "reference.cpp");
  EXPECT_EQ(files["baseline"], "baseline.cu");
  EXPECT_EQ(files["starter"], "starter.cu");
  EXPECT_EQ(files["readme"], "README.md");
}

TEST(TaskJson, CarriesToleranceAndHash) {
  auto task = load_task(testing::bundled_tasks_dir() / "fp16_gemm");
  ASSERT_TRUE(task);
  const auto json = to_json(*task);
  EXPECT_EQ(json["tolerance"]["atol"], task->tolerance.atol);
  EXPECT_EQ(json["tolerance"]["rtol"], task->tolerance.rtol);
  EXPECT_THAT(json["tolerance"]["rule"].get<std::string>(), HasSubstr("atol + rtol * |ref|"));
  EXPECT_EQ(json["sha256"], task->sha256);
}

TEST(TaskJson, StaysUnderTheToolOutputBudget) {
  // Tool results should stay under 10 KB (tools/README.md, "What every tool shares").
  EXPECT_LT(fp16_gemm_contract().dump().size(), 10u * 1024u);
}

}  // namespace
}  // namespace kiln::tasks
