// Zoo entries as tasks (kiln/tasks/zoo_task.h): every entry of kb/zoo with a test block loads,
// its first test shape the sim workload; the inputs the zoo's tests draw specially (fp8 scales,
// group offsets, class and position indices) come out so; per-output tolerances hold; unknown
// ids, entries without a test block and malformed blocks are refused with the field.
#include "kiln/tasks/zoo_task.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "kiln/tasks/numeric_codec.h"
#include "kiln/tasks/tensor_layout.h"
#include "support/temp_dir.h"

namespace kiln::tasks {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

const fs::path kZoo = KILN_ZOO_DIR;

// A zoo of one entry whose meta.json is `meta`.
struct OneEntryZoo {
  explicit OneEntryZoo(const nlohmann::json& meta, const std::string& id = "entry") {
    kiln::testing::write_text(dir.path() / id / "meta.json", meta.dump(2));
  }
  kiln::testing::TempDir dir;
};

nlohmann::json softmax_meta() {
  return {{"title", "Softmax"},
          {"op", "softmax"},
          {"arch", "sm_90a"},
          {"test",
           {{"signature",
             {{"inputs", {{{"name", "x"}, {"dtype", "f32"}, {"shape", {"R", "C"}}}}},
              {"outputs", {{{"name", "y"}, {"dtype", "f32"}, {"shape", {"R", "C"}}}}},
              {"scalars", nlohmann::json::array()}}},
            {"shapes", {{{"R", 8}, {"C", 300}}, {{"R", 4096}, {"C", 8192}}}},
            {"tolerance", {{"atol", 1e-7}, {"rtol", 1e-5}}},
            {"input_range", {-1, 1}},
            {"flops", "4*R*C"},
            {"bytes", "8*R*C"}}}};
}

std::vector<int64_t> values_of(const TensorLayout& tensor,
                               const std::vector<unsigned char>& bytes) {
  std::vector<int64_t> out;
  const int size = dtype_size(tensor.dtype);
  for (int64_t i = 0; i < tensor.elements(); ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes.data() + i * size, static_cast<size_t>(size));
    out.push_back(static_cast<int64_t>(decode(tensor.dtype, bits)));
  }
  return out;
}

const TensorLayout& tensor_named(const WorkloadLayout& layout, const std::string& name) {
  for (const auto& tensor : layout.tensors)
    if (tensor.name == name) return tensor;
  throw std::runtime_error("no tensor " + name);
}

TEST(ZooTask, EveryEntryWithATestBlockLoadsWithItsFirstShapeAsTheSimWorkload) {
  const std::vector<std::string> ids = zoo_task_ids(kZoo);
  ASSERT_GE(ids.size(), 20u);
  for (const std::string& id : ids) {
    SCOPED_TRACE(id);
    auto task = load_zoo_task(kZoo, id);
    ASSERT_TRUE(task.ok()) << task.error().message;
    EXPECT_EQ(task->name, "zoo:" + id);
    EXPECT_TRUE(task->from_zoo());
    EXPECT_FALSE(task->zoo_op.empty());
    EXPECT_TRUE(fs::is_regular_file(task->starter_path));
    ASSERT_EQ(task->sim_workloads.size(), 1u);
    EXPECT_EQ(task->sim_workloads[0].dims, task->workloads[0].dims);
    EXPECT_EQ(task->sha256.size(), 64u);
    auto layout = layout_workload(*task, task->sim_workloads[0]);
    EXPECT_TRUE(layout.ok()) << layout.error().message;
    const auto contract = to_json(*task);
    EXPECT_EQ(contract["zoo"]["op"], task->zoo_op);
    EXPECT_EQ(contract["scoring"]["metric"], "none");
  }
}

TEST(ZooTask, ReadsTheTestBlockAsTheContract) {
  OneEntryZoo zoo(softmax_meta(), "softmax_online");
  auto task = load_zoo_task(zoo.dir.path(), "softmax_online");
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->zoo_op, "softmax");
  EXPECT_EQ(task->arch, "sm_90a");
  ASSERT_EQ(task->tensors.size(), 2u);
  EXPECT_EQ(task->tensors[0].distribution.kind, "uniform");
  EXPECT_EQ(task->tensors[0].distribution.low, -1);
  EXPECT_EQ(task->tensors[0].distribution.high, 1);
  EXPECT_EQ(task->tolerance.atol, 1e-7);
  EXPECT_EQ(task->tolerance.rtol, 1e-5);
  ASSERT_EQ(task->workloads.size(), 2u);
  EXPECT_EQ(task->workloads[1].name, "shape2");
  EXPECT_EQ(task->workloads[1].dims.at("C"), 8192);
  EXPECT_EQ(task->sim_workloads[0].name, "shape1");
  EXPECT_EQ(task->sim_workloads[0].dims.at("R"), 8);
}

TEST(ZooTask, DrawsTheInputsTheZooTestsDrawSpecially) {
  auto fp8 = load_zoo_task(kZoo, "gemm_fp8_wgmma");
  ASSERT_TRUE(fp8.ok()) << fp8.error().message;
  auto fp8_layout = layout_workload(*fp8, fp8->sim_workloads[0]);
  ASSERT_TRUE(fp8_layout.ok()) << fp8_layout.error().message;
  const TensorLayout& scale_a = tensor_named(*fp8_layout, "scale_a");
  uint32_t bits = 0;
  std::memcpy(&bits, scale_a.fixed_bytes.data(), 4);
  EXPECT_EQ(decode(KILN_F32, bits), 0.5);
  std::memcpy(&bits, tensor_named(*fp8_layout, "scale_b").fixed_bytes.data(), 4);
  EXPECT_EQ(decode(KILN_F32, bits), 0.25);

  auto ce = load_zoo_task(kZoo, "cross_entropy_online");
  ASSERT_TRUE(ce.ok()) << ce.error().message;
  auto ce_layout = layout_workload(*ce, ce->sim_workloads[0]);
  ASSERT_TRUE(ce_layout.ok()) << ce_layout.error().message;
  const TensorLayout& targets = tensor_named(*ce_layout, "targets");
  EXPECT_EQ(targets.distribution.low, 0);
  EXPECT_EQ(targets.distribution.high, static_cast<double>(ce->sim_workloads[0].dims.at("V")));

  auto meta = softmax_meta();
  meta["op"] = "grouped_gemm_tn";
  meta["test"]["group_sizes_multiple_of"] = 8;
  meta["test"]["signature"] = {
      {"inputs",
       {{{"name", "A"}, {"dtype", "f16"}, {"shape", {"M", "K"}}},
        {{"name", "B"}, {"dtype", "f16"}, {"shape", {"G", "N", "K"}}},
        {{"name", "offsets"}, {"dtype", "i32"}, {"shape", {"G+1"}}}}},
      {"outputs", {{{"name", "C"}, {"dtype", "f16"}, {"shape", {"M", "N"}}}}}};
  meta["test"]["shapes"] = {{{"G", 5}, {"M", 264}, {"N", 16}, {"K", 16}}};
  meta["test"]["bytes"] = "2*M*K";
  meta["test"]["flops"] = "2*M*N*K";
  OneEntryZoo zoo(meta);
  auto grouped = load_zoo_task(zoo.dir.path(), "entry");
  ASSERT_TRUE(grouped.ok()) << grouped.error().message;
  auto layout = layout_workload(*grouped, grouped->sim_workloads[0]);
  ASSERT_TRUE(layout.ok()) << layout.error().message;
  const TensorLayout& offsets = tensor_named(*layout, "offsets");
  const std::vector<int64_t> values = values_of(offsets, offsets.fixed_bytes);
  ASSERT_EQ(values.size(), 6u);
  EXPECT_EQ(values.front(), 0);
  EXPECT_EQ(values.back(), 264);
  for (size_t g = 0; g + 1 < values.size(); ++g) {
    EXPECT_LE(values[g], values[g + 1]);
    EXPECT_EQ((values[g + 1] - values[g]) % 8, 0) << "group " << g;
  }
}

// Index inputs that must not repeat: top-k experts per token distinct within the row, cache
// positions distinct over the tensor, the unpermute row map a permutation; and the cache rows
// no position names are outside the contract and must keep the poison.
TEST(ZooTask, DrawsDistinctIndicesAndPermutationsAndGuardsUnwrittenRows) {
  auto permute = load_zoo_task(kZoo, "moe_token_permute");
  ASSERT_TRUE(permute.ok()) << permute.error().message;
  for (const Workload& workload : permute->workloads) {
    auto layout = layout_workload(*permute, workload);
    ASSERT_TRUE(layout.ok()) << layout.error().message;
    const TensorLayout& indices = tensor_named(*layout, "indices");
    const std::vector<int64_t> values = values_of(indices, indices.fixed_bytes);
    const int64_t k = workload.dims.at("K"), experts = workload.dims.at("E");
    for (size_t row = 0; row < values.size(); row += static_cast<size_t>(k)) {
      std::vector<int64_t> chosen(values.begin() + static_cast<std::ptrdiff_t>(row),
                                  values.begin() + static_cast<std::ptrdiff_t>(row) + k);
      for (int64_t e : chosen) ASSERT_TRUE(e >= 0 && e < experts) << e;
      std::sort(chosen.begin(), chosen.end());
      ASSERT_EQ(std::adjacent_find(chosen.begin(), chosen.end()), chosen.end())
          << workload.name << " token " << row / static_cast<size_t>(k);
    }
  }

  auto unpermute = load_zoo_task(kZoo, "moe_token_unpermute");
  ASSERT_TRUE(unpermute.ok()) << unpermute.error().message;
  auto rows_layout = layout_workload(*unpermute, unpermute->sim_workloads[0]);
  ASSERT_TRUE(rows_layout.ok()) << rows_layout.error().message;
  const TensorLayout& dest = tensor_named(*rows_layout, "dest_rows");
  std::vector<int64_t> rows = values_of(dest, dest.fixed_bytes);
  std::sort(rows.begin(), rows.end());
  for (size_t i = 0; i < rows.size(); ++i) ASSERT_EQ(rows[i], static_cast<int64_t>(i));

  auto cache = load_zoo_task(kZoo, "kv_cache_append_rope");
  ASSERT_TRUE(cache.ok()) << cache.error().message;
  auto cache_layout = layout_workload(*cache, cache->sim_workloads[0]);
  ASSERT_TRUE(cache_layout.ok()) << cache_layout.error().message;
  const TensorLayout& positions = tensor_named(*cache_layout, "positions");
  std::vector<int64_t> listed = values_of(positions, positions.fixed_bytes);
  const TensorLayout& k_cache = tensor_named(*cache_layout, "k_cache");
  ASSERT_EQ(k_cache.ignored_rows.size(), static_cast<size_t>(k_cache.shape[0]));
  size_t written = 0;
  for (size_t r = 0; r < k_cache.ignored_rows.size(); ++r) {
    const bool is_listed = std::find(listed.begin(), listed.end(), r) != listed.end();
    EXPECT_EQ(k_cache.ignored_rows[r], is_listed ? 0 : kRowUntouched) << "row " << r;
    written += is_listed ? 1 : 0;
  }
  EXPECT_EQ(written, listed.size()) << "positions repeat";
  EXPECT_EQ(to_json(*cache)["ignore_rows_where"].size(), 2u);
}

TEST(ZooTask, OutputsWithTheirOwnToleranceKeepIt) {
  auto task = load_zoo_task(kZoo, "add_rmsnorm_fp8_bf16");
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->tolerance.for_output("q").rtol, 0.125);
  EXPECT_EQ(task->tolerance.for_output("q").atol, 0.002);
  EXPECT_EQ(task->tolerance.for_output("residual_out").rtol, 0.01);
  EXPECT_EQ(to_json(*task)["tolerance"]["outputs"]["q"]["rtol"], 0.125);
}

TEST(ZooTask, RefusesAnUnknownIdListingTheEntries) {
  OneEntryZoo zoo(softmax_meta(), "softmax_online");
  for (const std::string id : {"nope", "../softmax_online", ""}) {
    auto task = load_zoo_task(zoo.dir.path(), id);
    ASSERT_FALSE(task.ok()) << id;
    EXPECT_THAT(task.error().message,
                AllOf(HasSubstr("no zoo entry `" + id + "`"), HasSubstr("softmax_online")));
  }
}

TEST(ZooTask, RefusesAnEntryWithoutATestBlock) {
  auto meta = softmax_meta();
  meta.erase("test");
  OneEntryZoo zoo(meta);
  auto task = load_zoo_task(zoo.dir.path(), "entry");
  ASSERT_FALSE(task.ok());
  EXPECT_THAT(task.error().message,
              AllOf(HasSubstr("entry/meta.json: test: is missing"), HasSubstr("kb/zoo/README.md")));
  EXPECT_TRUE(zoo_task_ids(zoo.dir.path()).empty());
}

TEST(ZooTask, RefusesAMalformedTestBlockNamingTheField) {
  auto meta = softmax_meta();
  meta["test"]["signature"]["inputs"][0]["dtype"] = "fp17";
  OneEntryZoo zoo(meta);
  auto task = load_zoo_task(zoo.dir.path(), "entry");
  ASSERT_FALSE(task.ok());
  EXPECT_THAT(task.error().message,
              HasSubstr("test.signature.inputs[0].dtype: 'fp17' is not a known dtype"));

  meta = softmax_meta();
  meta["test"]["shapes"][1].erase("C");
  OneEntryZoo missing_dim(meta);
  task = load_zoo_task(missing_dim.dir.path(), "entry");
  ASSERT_FALSE(task.ok());
  EXPECT_THAT(task.error().message, HasSubstr("test.shapes[1]: does not give dim C"));
}

}  // namespace
}  // namespace kiln::tasks
