#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "bundle_fixture.h"
#include "kiln/tasks/task.h"

namespace kiln::tasks {
namespace {

using ::testing::AllOf;
using testing::BundleCopy;
using testing::bundled_tasks_dir;
using ::testing::HasSubstr;

// Loads a copy of fp16_gemm whose task.json was changed by `edit`; returns the error.
std::string error_after_edit(const std::function<void(nlohmann::json&)>& edit) {
  BundleCopy bundle;
  auto json = bundle.task_json();
  edit(json);
  bundle.set_task_json(json);
  auto task = load_task(bundle.dir());
  if (task) return "(loaded without error)";
  return task.error().message;
}

TEST(TaskLoader, LoadsBundledFp16Gemm) {
  auto task = load_task(bundled_tasks_dir() / "fp16_gemm");
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_EQ(task->name, "fp16_gemm");
  EXPECT_EQ(task->arch, "sm_90a");
  EXPECT_EQ(task->dims, (std::vector<std::string>{"M", "N", "K"}));
  ASSERT_EQ(task->tensors.size(), 3u);
  EXPECT_EQ(task->tensors[0].name, "A");
  EXPECT_EQ(task->tensors[0].shape, (std::vector<std::string>{"M", "K"}));
  EXPECT_FALSE(task->tensors[0].is_output);
  EXPECT_EQ(task->tensors[0].distribution.low, -1.0);
  EXPECT_EQ(task->tensors[0].distribution.high, 1.0);
  EXPECT_EQ(task->tensors[1].shape, (std::vector<std::string>{"N", "K"}));
  EXPECT_EQ(task->tensors[2].name, "C");
  EXPECT_TRUE(task->tensors[2].is_output);
  EXPECT_TRUE(task->scalars.empty());
  ASSERT_EQ(task->workloads.size(), 10u);
  EXPECT_EQ(task->workloads[3].dims.at("K"), 14336);
  EXPECT_EQ(task->sim_workloads.size(), 4u);
  EXPECT_GT(task->tolerance.atol, 0.0);
  EXPECT_GT(task->tolerance.rtol, 0.0);
  EXPECT_EQ(task->flops, "2*M*N*K");
  EXPECT_EQ(task->baseline_libraries, (std::vector<std::string>{"cublas"}));
  EXPECT_THAT(task->banned_symbols, ::testing::Contains("cublas"));
  EXPECT_FALSE(task->rules.empty());
  EXPECT_TRUE(std::filesystem::is_regular_file(task->reference_path));
  EXPECT_TRUE(std::filesystem::is_regular_file(task->baseline_path));
  EXPECT_TRUE(std::filesystem::is_regular_file(task->starter_path));
  EXPECT_TRUE(std::filesystem::is_regular_file(task->readme_path));
  EXPECT_EQ(task->sha256.size(), 64u);
}

TEST(TaskLoader, HostSynchronizationIsForbiddenUnlessTheTaskAllowsIt) {
  auto bundled = load_task(bundled_tasks_dir() / "fp16_gemm");
  ASSERT_TRUE(bundled);
  EXPECT_FALSE(bundled->allow_host_sync);
  BundleCopy bundle;
  auto json = bundle.task_json();
  json["allow_host_sync"] = true;
  bundle.set_task_json(json);
  auto allowed = load_task(bundle.dir());
  ASSERT_TRUE(allowed) << allowed.error().message;
  EXPECT_TRUE(allowed->allow_host_sync);
  EXPECT_THAT(error_after_edit([](nlohmann::json& j) { j["allow_host_sync"] = "yes"; }),
              AllOf(HasSubstr("allow_host_sync"), HasSubstr("true or false")));
}

TEST(TaskLoader, TheGpuReferenceIsOptional) {
  auto gemm = load_task(bundled_tasks_dir() / "fp16_gemm");
  ASSERT_TRUE(gemm) << gemm.error().message;
  EXPECT_EQ(gemm->gpu_reference_path.filename(), "gpu_reference.cu");
  EXPECT_EQ(to_json(*gemm)["files"]["gpu_reference"], "gpu_reference.cu");
  auto norm = load_task(bundled_tasks_dir() / "rmsnorm");
  ASSERT_TRUE(norm) << norm.error().message;
  EXPECT_TRUE(norm->gpu_reference_path.empty());
  EXPECT_FALSE(to_json(*norm)["files"].contains("gpu_reference"));
  // Without the field the bundle still loads, and its hash no longer covers the file.
  BundleCopy bundle;
  auto json = bundle.task_json();
  json["files"].erase("gpu_reference");
  bundle.set_task_json(json);
  auto without = load_task(bundle.dir());
  ASSERT_TRUE(without) << without.error().message;
  EXPECT_TRUE(without->gpu_reference_path.empty());
  EXPECT_THAT(error_after_edit([](auto& j) { j["files"]["gpu_reference"] = "missing.cu"; }),
              HasSubstr("task.json: files.gpu_reference: 'missing.cu' does not exist"));
}

TEST(TaskLoader, AcceptsBundlePathWithTrailingSlash) {
  auto plain = load_task(bundled_tasks_dir() / "fp16_gemm");
  auto slashed = load_task((bundled_tasks_dir() / "fp16_gemm").string() + "/");
  ASSERT_TRUE(plain);
  ASSERT_TRUE(slashed) << slashed.error().message;
  EXPECT_EQ(plain->sha256, slashed->sha256);
  EXPECT_EQ(plain->starter_path, slashed->starter_path);
}

TEST(TaskLoader, RejectsFolderWithoutTaskJson) {
  BundleCopy bundle;
  std::filesystem::remove(bundle.dir() / "task.json");
  auto task = load_task(bundle.dir());
  ASSERT_FALSE(task);
  EXPECT_THAT(task.error().message,
              AllOf(HasSubstr((bundle.dir() / "task.json").string()), HasSubstr("does not exist")));
}

TEST(TaskLoader, RejectsMalformedJsonWithLineNumber) {
  BundleCopy bundle;
  testing::write_text(bundle.dir() / "task.json",
                      "{\n  \"name\": \"fp16_gemm\",\n  \"title\": }\n");
  auto task = load_task(bundle.dir());
  ASSERT_FALSE(task);
  EXPECT_THAT(task.error().message,
              AllOf(HasSubstr("task.json: is not valid JSON"), HasSubstr("line 3")));
}

// nlohmann throws out_of_range (not parse_error) for 1e400; it used to escape load_task.
TEST(TaskLoader, RejectsNumberBeyondDoubleWithoutThrowing) {
  BundleCopy bundle;
  std::string text = bundle.task_json().dump(2);
  text.insert(text.rfind('}'), ", \"x\": 1e400");
  testing::write_text(bundle.dir() / "task.json", text);
  auto task = load_task(bundle.dir());
  ASSERT_FALSE(task);
  EXPECT_THAT(task.error().message,
              AllOf(HasSubstr("task.json: is not valid JSON"), HasSubstr("number overflow")));
}

// The runner loads task.json files that clients send; nesting that deep overflowed the stack.
TEST(TaskLoader, RejectsNestingDeeperThanTheLimit) {
  BundleCopy bundle;
  std::string text = bundle.task_json().dump(2);
  text.insert(text.rfind('}'), ", \"x\": " + std::string(200000, '[') + std::string(200000, ']'));
  testing::write_text(bundle.dir() / "task.json", text);
  auto task = load_task(bundle.dir());
  ASSERT_FALSE(task);
  EXPECT_THAT(task.error().message, HasSubstr("task.json: nests arrays and objects deeper than"));
}

TEST(TaskLoader, RejectsTopLevelThatIsNotAnObject) {
  EXPECT_THAT(error_after_edit([](auto& j) { j = nlohmann::json::array(); }),
              HasSubstr("task.json: must be an object"));
}

TEST(TaskLoader, MaxCvIsOptionalAndReadAsAFraction) {
  BundleCopy bundle;
  auto plain = load_task(bundle.dir());
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_FALSE(plain->max_cv.has_value());
  auto json = bundle.task_json();
  json["max_cv"] = 0.12;
  bundle.set_task_json(json);
  auto task = load_task(bundle.dir());
  ASSERT_TRUE(task.ok()) << task.error().message;
  ASSERT_TRUE(task->max_cv.has_value());
  EXPECT_DOUBLE_EQ(*task->max_cv, 0.12);
  EXPECT_DOUBLE_EQ(to_json(*task)["max_cv"].get<double>(), 0.12);
  EXPECT_NE(task->sha256, plain->sha256);  // the budget is part of the frozen contract
}

TEST(TaskLoader, RejectsMaxCvThatIsNotAFractionInRange) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["max_cv"] = "5%"; }),
              AllOf(HasSubstr("task.json: max_cv: must be a number"), HasSubstr("0.05 for 5%")));
  EXPECT_THAT(error_after_edit([](auto& j) { j["max_cv"] = 0; }),
              AllOf(HasSubstr("task.json: max_cv: is 0; it must be above 0 and at most 0.5"),
                    HasSubstr("0.05 is 5%, not 5")));
  EXPECT_THAT(error_after_edit([](auto& j) { j["max_cv"] = -0.1; }),
              HasSubstr("max_cv: is -0.1; it must be above 0"));
  EXPECT_THAT(error_after_edit([](auto& j) { j["max_cv"] = 5; }),
              HasSubstr("task.json: max_cv: is 5; it must be above 0 and at most 0.5"));
  EXPECT_THAT(error_after_edit([](auto& j) { j["max_cv"] = 0.51; }), HasSubstr("at most 0.5"));
}

TEST(TaskLoader, RejectsMissingRequiredField) {
  EXPECT_THAT(error_after_edit([](auto& j) { j.erase("bytes"); }),
              HasSubstr("task.json: bytes: is missing"));
}

TEST(TaskLoader, RejectsUnknownTopLevelField) {
  EXPECT_THAT(
      error_after_edit([](auto& j) { j["workload"] = nlohmann::json::array(); }),
      AllOf(HasSubstr("task.json: workload: is not a known field"), HasSubstr("workloads")));
}

TEST(TaskLoader, RejectsTitleOfWrongType) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["title"] = 5; }),
              HasSubstr("task.json: title: must be a string, got an integer"));
}

TEST(TaskLoader, RejectsNameDifferentFromFolder) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["name"] = "other_gemm"; }),
              AllOf(HasSubstr("task.json: name:"), HasSubstr("folder name 'fp16_gemm'")));
}

TEST(TaskLoader, RejectsUnknownArch) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["arch"] = "hopper"; }),
              HasSubstr("task.json: arch: 'hopper' is not a GPU architecture"));
}

TEST(TaskLoader, RejectsRepeatedDim) {
  EXPECT_THAT(error_after_edit([](auto& j) {
                j["dims"] = {"M", "N", "M"};
              }),
              HasSubstr("task.json: dims[2]: repeats the dim 'M'"));
}

TEST(TaskLoader, RejectsUnknownDtype) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["signature"]["inputs"][1]["dtype"] = "fp16"; }),
              AllOf(HasSubstr("task.json: signature.inputs[1].dtype: 'fp16' is not a known dtype"),
                    HasSubstr("f16")));
}

TEST(TaskLoader, RejectsShapeNamingUndeclaredDim) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["signature"]["inputs"][0]["shape"][1] = "Q"; }),
              AllOf(HasSubstr("task.json: signature.inputs[0].shape[1]:"),
                    HasSubstr("'Q', which is not a dim")));
}

TEST(TaskLoader, RejectsShapeThatDoesNotParse) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["signature"]["outputs"][0]["shape"][0] = "M*"; }),
              AllOf(HasSubstr("task.json: signature.outputs[0].shape[0]:"), HasSubstr("'M*'")));
}

TEST(TaskLoader, RejectsShapeThatIsNotPositiveAtAWorkload) {
  // K-64 is zero at the 64x64x64 simulator workload.
  EXPECT_THAT(error_after_edit([](auto& j) { j["signature"]["inputs"][0]["shape"][1] = "K-64"; }),
              AllOf(HasSubstr("task.json: sim_workloads[0]: signature.inputs[0].shape[1]"),
                    HasSubstr("must be positive")));
}

TEST(TaskLoader, RejectsRepeatedTensorName) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["signature"]["outputs"][0]["name"] = "A"; }),
              HasSubstr("task.json: signature.outputs[0].name: repeats the name 'A'"));
}

TEST(TaskLoader, RejectsEmptyInputs) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["signature"]["inputs"] = nlohmann::json::array(); }),
              HasSubstr("task.json: signature.inputs: must list at least one tensor"));
}

TEST(TaskLoader, RejectsScalarWithUnknownDtype) {
  EXPECT_THAT(error_after_edit([](auto& j) {
                j["signature"]["scalars"] = {{{"name", "alpha"}, {"dtype", "f32"}, {"value", 1}}};
              }),
              HasSubstr("task.json: signature.scalars[0].dtype: 'f32' is not a scalar dtype"));
}

TEST(TaskLoader, AcceptsScalarsGivenAsExpressionOrNumber) {
  BundleCopy bundle;
  auto json = bundle.task_json();
  json["signature"]["scalars"] = {{{"name", "lda"}, {"dtype", "i64"}, {"value", "K"}},
                                  {{"name", "alpha"}, {"dtype", "f64"}, {"value", 0.5}}};
  bundle.set_task_json(json);
  auto task = load_task(bundle.dir());
  ASSERT_TRUE(task) << task.error().message;
  ASSERT_EQ(task->scalars.size(), 2u);
  EXPECT_EQ(task->scalars[0].value, "K");
  EXPECT_EQ(task->scalars[1].value, "0.5");
}

TEST(TaskLoader, RejectsInputWithoutDistribution) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["input_distribution"].erase("B"); }),
              HasSubstr("task.json: input_distribution.B: is missing"));
}

TEST(TaskLoader, RejectsDistributionForAnOutput) {
  EXPECT_THAT(error_after_edit([](auto& j) {
                j["input_distribution"]["C"] = {{"kind", "uniform"}, {"low", 0}, {"high", 1}};
              }),
              HasSubstr("task.json: input_distribution.C: is not an input tensor"));
}

TEST(TaskLoader, RejectsEmptyDistributionRange) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["input_distribution"]["A"]["high"] = -1; }),
              HasSubstr("task.json: input_distribution.A.high: must be greater than low"));
}

TEST(TaskLoader, RejectsWorkloadDimGivenAsString) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["workloads"][3]["K"] = "14336"; }),
              HasSubstr("task.json: workloads[3].K: must be a positive integer"));
}

TEST(TaskLoader, RejectsWorkloadDimGivenAsFraction) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["workloads"][0]["M"] = 4096.5; }),
              HasSubstr("task.json: workloads[0].M: must be a positive integer, got 4096.5"));
}

TEST(TaskLoader, RejectsNegativeWorkloadDim) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["workloads"][3]["K"] = -4; }),
              HasSubstr("task.json: workloads[3].K: must be a positive integer, got -4"));
}

TEST(TaskLoader, RejectsZeroSimWorkloadDim) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["sim_workloads"][2]["N"] = 0; }),
              HasSubstr("task.json: sim_workloads[2].N: must be a positive integer, got 0"));
}

TEST(TaskLoader, RejectsWorkloadMissingADim) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["workloads"][2].erase("K"); }),
              AllOf(HasSubstr("task.json: workloads[2].K: is missing"), HasSubstr("every dim")));
}

TEST(TaskLoader, RejectsWorkloadWithUndeclaredDim) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["workloads"][0]["batch"] = 2; }),
              HasSubstr("task.json: workloads[0].batch: is not a dim"));
}

TEST(TaskLoader, RejectsWorkloadWithoutName) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["sim_workloads"][1].erase("name"); }),
              HasSubstr("task.json: sim_workloads[1].name: is missing"));
}

TEST(TaskLoader, RejectsDuplicateWorkloadName) {
  EXPECT_THAT(
      error_after_edit([](auto& j) { j["workloads"][4]["name"] = j["workloads"][0]["name"]; }),
      AllOf(HasSubstr("task.json: workloads[4].name: '4096x4096x4096' repeats workloads[0]"),
            HasSubstr("unique")));
}

TEST(TaskLoader, RejectsEmptyWorkloadList) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["workloads"] = nlohmann::json::array(); }),
              HasSubstr("task.json: workloads: must list at least one workload"));
}

TEST(TaskLoader, RejectsNegativeTolerance) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["tolerance"]["atol"] = -0.1; }),
              HasSubstr("task.json: tolerance.atol: must be a non-negative number"));
}

TEST(TaskLoader, RejectsMismatchFractionAboveOne) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["tolerance"]["max_mismatch_fraction"] = 2; }),
              HasSubstr("task.json: tolerance.max_mismatch_fraction: must be at most 1"));
}

TEST(TaskLoader, RejectsFlopsNamingUndeclaredDim) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["flops"] = "2*M*N*L"; }),
              HasSubstr("task.json: flops: expression '2*M*N*L' names 'L'"));
}

TEST(TaskLoader, RejectsMissingReferencedFile) {
  BundleCopy bundle;
  std::filesystem::remove(bundle.dir() / "starter.cu");
  auto task = load_task(bundle.dir());
  ASSERT_FALSE(task);
  EXPECT_THAT(task.error().message,
              AllOf(HasSubstr("task.json: files.starter: 'starter.cu' does not exist"),
                    HasSubstr("add the file or fix the path")));
}

TEST(TaskLoader, RejectsReferencedFileOutsideBundle) {
  EXPECT_THAT(
      error_after_edit([](auto& j) { j["files"]["readme"] = "../README.md"; }),
      HasSubstr("task.json: files.readme: '../README.md' must be a path inside the bundle"));
}

TEST(TaskLoader, RejectsBaselineFileDifferentFromFilesEntry) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["baseline"]["file"] = "starter.cu"; }),
              HasSubstr("task.json: baseline.file: 'starter.cu' differs from files.baseline"));
}

TEST(TaskLoader, RejectsBannedSymbolThatIsNotAnIdentifier) {
  EXPECT_THAT(error_after_edit([](auto& j) { j["banned_symbols"][0] = "cu blas"; }),
              HasSubstr("task.json: banned_symbols[0]: must be an identifier"));
}

}  // namespace
}  // namespace kiln::tasks
