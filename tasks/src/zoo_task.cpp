// load_zoo_task: a zoo entry's meta.json test block as a Task (kiln/tasks/zoo_task.h).
#include "kiln/tasks/zoo_task.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <tuple>

#include "json_field.h"
#include "kiln/base/file.h"
#include "kiln/base/json_text.h"
#include "kiln/base/sha256.h"
#include "kiln/base/text.h"
#include "task_fields.h"

namespace kiln::tasks {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kGuide = "kb/zoo/README.md";

TensorSpec* find_input(Task& task, const std::string& name) {
  for (auto& tensor : task.tensors)
    if (!tensor.is_output && tensor.name == name) return &tensor;
  return nullptr;
}

// Inputs as the zoo's tests draw them (tests/zoo/support/zoo_case.h), uniform otherwise.
void set_distributions(const JsonField& test, const std::string& op, double low, double high,
                       Task& task) {
  for (auto& tensor : task.tensors) {
    if (tensor.is_output) continue;
    Distribution& d = tensor.distribution;
    const bool integer = tensor.dtype[0] == 'i' || tensor.dtype[0] == 'u';
    d.kind = "uniform";
    d.low = low;
    d.high = high;
    // Integers are floored, so [low, high + 1) gives every integer of the closed range.
    if (integer) d.high = high + 1;
  }
  if (op == "gemm_tn_fp8") {
    for (const auto& [name, value] : {std::pair<std::string, double>{"scale_a", 0.5},
                                      std::pair<std::string, double>{"scale_b", 0.25}}) {
      if (TensorSpec* scale = find_input(task, name)) {
        scale->distribution.kind = "constant";
        scale->distribution.low = value;
      }
    }
  }
  if (TensorSpec* offsets = find_input(task, "offsets"); op == "grouped_gemm_tn" && offsets) {
    int64_t multiple = 8;
    if (const auto field = test.find("group_sizes_multiple_of"))
      multiple = field->positive_integer();
    Distribution& d = offsets->distribution;
    d.kind = "group_offsets";
    d.groups = "G";
    d.rows_per_group = "M";
    d.align = std::to_string(multiple);
    d.seed = "M+G";
  }
  // Index inputs, as the zoo's tests draw them: into another dim, distinct where two equal
  // values would be outside the op's contract (two tokens writing one cache row, one token
  // routed twice to an expert), a permutation where the op reads a row map.
  for (const auto& [want_op, name, kind, extent] :
       {std::tuple<std::string, std::string, std::string, std::string>{"cross_entropy", "targets",
                                                                       "indices", "V"},
        {"rope", "positions", "indices", "P"},
        {"grouped_gemm_masked", "masked_m", "indices", "M+1"},
        {"kv_cache_append_rope", "positions", "distinct_indices", "S"},
        {"moe_permute", "indices", "distinct_indices", "E"},
        {"moe_unpermute", "dest_rows", "permutation", ""}}) {
    if (TensorSpec* tensor = find_input(task, name); op == want_op && tensor) {
      tensor->distribution.kind = kind;
      tensor->distribution.extent = extent;
    }
  }
}

// Ops that write only the rows an input lists: every other output row must keep the poison
// (what the zoo's tests check with ReferenceRun::others_untouched).
void set_untouched_rows(const std::string& op, Task& task) {
  if (op != "kv_cache_append_rope" || !find_input(task, "positions")) return;
  for (const auto& tensor : task.tensors)
    if (tensor.is_output) {
      IgnoredRows rule;
      rule.output = tensor.name;
      rule.index = "positions";
      rule.untouched = true;
      task.ignore_rows_where.push_back(rule);
    }
}

std::vector<Workload> read_shapes(const JsonField& field, std::vector<std::string>& dims) {
  const auto shapes = field.elements();
  if (shapes.empty()) field.fail("must list at least one shape, the small ones first");
  for (const auto& shape : shapes)
    for (const auto& key : shape.keys())
      if (std::find(dims.begin(), dims.end(), key) == dims.end()) dims.push_back(key);
  std::vector<Workload> workloads;
  for (const auto& shape : shapes) {
    Workload workload;
    workload.name = "shape" + std::to_string(workloads.size() + 1);
    for (const auto& dim : dims) {
      const auto value = shape.find(dim);
      if (!value)
        shape.fail("does not give dim " + dim + "; every shape names the same dims (" +
                   join(dims, ", ") + ")");
      workload.dims[dim] = value->positive_integer();
    }
    workloads.push_back(std::move(workload));
  }
  return workloads;
}

void read_zoo_tolerance(const JsonField& field, const Task& task, Tolerance& tolerance) {
  field.allow_only({"atol", "rtol", "outputs"});
  tolerance.atol = field.at("atol").nonnegative_number();
  tolerance.rtol = field.at("rtol").nonnegative_number();
  const auto outputs = field.find("outputs");
  if (!outputs) return;
  for (const auto& name : outputs->keys()) {
    const auto entry = outputs->at(name);
    if (std::none_of(task.tensors.begin(), task.tensors.end(),
                     [&](const TensorSpec& t) { return t.is_output && t.name == name; }))
      entry.fail("is not an output of test.signature; name outputs only");
    entry.allow_only({"atol", "rtol"});
    tolerance.outputs[name] = {entry.at("atol").nonnegative_number(),
                               entry.at("rtol").nonnegative_number()};
  }
}

Task read_zoo_test(const JsonField& root, const fs::path& entry, const std::string& id) {
  Task task;
  task.name = std::string(kZooTaskPrefix) + id;
  task.dir = entry;
  task.zoo_entry = entry;
  task.zoo_op = root.at("op").nonempty_string();
  task.title = root.at("title").nonempty_string();
  task.description = "Zoo entry " + id + " (op " + task.zoo_op + ") as a task: " +
                     (root.find("description") ? root.at("description").string() : task.title);
  task.arch = root.find("arch") ? root.at("arch").nonempty_string() : "sm_90a";
  const auto test = root.find("test");
  if (!test)
    throw FieldError{"test", "is missing, so entry " + id +
                                 " has no contract to run against; add a test block (signature, "
                                 "shapes, tolerance, input_range: kb/zoo/README.md)"};
  task.workloads = read_shapes(test->at("shapes"), task.dims);
  task.sim_workloads = {task.workloads.front()};
  read_task_signature(test->at("signature"), task.dims, task);
  double low = -1, high = 1;
  if (const auto range = test->find("input_range")) {
    const auto bounds = range->elements();
    if (bounds.size() != 2) range->fail("must be [low, high]");
    low = bounds[0].number();
    high = bounds[1].number();
    if (!(low < high)) range->fail("must have low < high");
  }
  set_distributions(*test, task.zoo_op, low, high, task);
  set_untouched_rows(task.zoo_op, task);
  read_zoo_tolerance(test->at("tolerance"), task, task.tolerance);
  if (const auto flops = test->find("flops")) task.flops = flops->nonempty_string();
  task.bytes = test->find("bytes") ? test->at("bytes").nonempty_string() : "0";
  check_task_workloads(task, task.workloads, "test.shapes");
  task.rules = {"This is zoo entry " + id + "'s contract (kb/zoo/" + id +
                "/meta.json, test block), checked against the CPU reference of op " + task.zoo_op +
                " on the simulator. compile, simulate, synccheck and racecheck take it; it "
                "has no baseline, so benchmark and profile do not."};
  task.starter_path = entry / "kernel.cu";
  task.readme_path = entry / "NOTES.md";
  return task;
}

bool has_test_block(const fs::path& meta) {
  auto text = read_file(meta);
  if (!text) return false;
  auto document = parse_json_bounded(*text);
  return document && document->is_object() && document->contains("test");
}

}  // namespace

bool is_zoo_task_name(std::string_view name) { return name.starts_with(kZooTaskPrefix); }

std::vector<std::string> zoo_task_ids(const fs::path& zoo_dir) {
  std::vector<std::string> ids;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(zoo_dir, error))
    if (entry.is_directory() && has_test_block(entry.path() / "meta.json"))
      ids.push_back(entry.path().filename().string());
  std::sort(ids.begin(), ids.end());
  return ids;
}

Result<Task> load_zoo_task(const fs::path& zoo_dir, const std::string& id) {
  const bool plain = !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  const fs::path entry = zoo_dir / id;
  const fs::path meta = entry / "meta.json";
  std::error_code error;
  if (!plain || id.find("..") != std::string::npos || !fs::is_regular_file(meta, error)) {
    const std::vector<std::string> ids = zoo_task_ids(zoo_dir);
    return make_error("no zoo entry `" + id + "` under " + zoo_dir.string() +
                      "; name one as zoo:ID, ID from search_zoo (entries with a test block: " +
                      (ids.empty() ? std::string("none") : join(ids, ", ")) + ")");
  }
  const std::string label = (zoo_dir.filename() / id / "meta.json").string();
  auto text = read_file(meta);
  if (!text) return make_error(label + ": " + text.error().message);
  auto document = parse_json_bounded(*text);
  if (!document) return make_error(label + ": " + document.error().message + "; fix the syntax");
  try {
    Task task = read_zoo_test(JsonField(*document, "", kGuide), entry, id);
    task.sha256 = sha256_hex(*text);
    return task;
  } catch (const FieldError& e) {
    return make_error(label + ": " + e.text());
  } catch (const nlohmann::json::exception& e) {
    return make_error(label + ": " + json_problem(e.what()));
  }
}

}  // namespace kiln::tasks
