// A task bundle: the fixed computation one run optimizes (tasks/FORMAT.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::tasks {

// How the harness makes an input tensor's values (tasks/FORMAT.md, input_distribution):
//   "uniform": independent draws from [low, high), rounded to the tensor's dtype, fresh from the
//              hidden seed for every draw;
//   "group_index": the row-to-group index of an M-grouped layout (kiln/group_layout.h), fixed by
//              the dims alone: rows_per_group, groups, align and seed are expressions over them.
// Three more kinds exist for tasks made from zoo entries (zoo_task.h); task.json cannot name them
// (the loader refuses them), and layout_workload turns each into fixed bytes or a uniform draw:
//   "constant": every element is `low`;
//   "group_offsets": G+1 int32 row offsets cutting `rows_per_group` (here: the total rows, an
//              expression) into `groups` contiguous groups whose sizes are multiples of `align`,
//              drawn from `seed` with kiln/group_layout.h; fixed by the dims;
//   "indices": uniform integers in [0, extent), `extent` an expression over the dims (class
//              targets, cached positions): drawn like uniform with low 0 and high the extent.
//   "distinct_indices": integers in [0, extent), distinct within each row of the last dimension
//              (top-k expert ids per token; a 1-D tensor is one row: cache positions no two
//              tokens share); fixed by the dims;
//   "permutation": a permutation of 0 .. elements-1 over the whole tensor (row maps); fixed by
//              the dims.
struct Distribution {
  std::string kind = "uniform";
  double low = -1;
  double high = 1;
  // group_index and group_offsets.
  std::string groups;
  std::string rows_per_group;
  std::string align;
  std::string seed;
  double spread = 0.25;
  std::string extent;  // indices and distinct_indices

  bool fixed_by_dims() const {
    return kind == "group_index" || kind == "group_offsets" || kind == "constant" ||
           kind == "distinct_indices" || kind == "permutation";
  }
};

// Rows of an output outside the contract (task.json "ignore_rows_where"): row r of `output`
// is never compared, counted or scored when index[r] == equals. `index` is an input whose
// values the dims fix (a group_index input), so the harness knows the rows without reading
// memory a candidate can reach.
//
// Zoo tasks of ops that write only some rows (zoo_task.h) use the other form, `untouched`: the
// rows of `output` whose number `index` does not list are outside the contract and must keep
// the poison pattern the harness wrote (a cache append leaves every other cache row as it was).
struct IgnoredRows {
  std::string output;
  std::string index;
  int64_t equals = -1;
  bool untouched = false;  // rows not listed in index must stay poisoned; `equals` unused
};

// One tensor of the kernel's signature. Shape entries are expressions over the
// task's dims ("M", "K", "2*N", "(M+127)/128"); they are evaluated per workload.
struct TensorSpec {
  std::string name;
  std::string dtype;               // f16 bf16 f32 f64 e4m3 e5m2 i8 u8 i32 i64
  std::vector<std::string> shape;  // expressions over dims
  bool is_output = false;
  Distribution distribution;  // inputs only
};

struct ScalarSpec {
  std::string name;
  std::string dtype;  // i64 or f64
  std::string value;  // expression over dims
};

// One problem size: a value for every dim.
struct Workload {
  std::string name;
  std::map<std::string, int64_t> dims;
};

// An output's own atol/rtol, for an output that needs one beside the others (an fp8 output
// beside a bf16 one). Only tasks made from zoo entries set them (test.tolerance.outputs).
struct OutputTolerance {
  double atol = 0;
  double rtol = 0;
};

struct Tolerance {
  double atol = 0;
  double rtol = 0;
  double max_mismatch_fraction = 0;  // share of elements allowed outside atol + rtol*|ref|
  std::map<std::string, OutputTolerance> outputs = {};  // by output name; else atol, rtol

  // The tolerance the output named `output` is compared with.
  Tolerance for_output(const std::string& output) const {
    const auto it = outputs.find(output);
    if (it == outputs.end()) return {atol, rtol, max_mismatch_fraction, {}};
    return {it->second.atol, it->second.rtol, max_mismatch_fraction, {}};
  }
};

struct Task {
  std::string name;
  std::string title;
  std::string description;
  std::string arch;  // e.g. sm_90a
  std::filesystem::path dir;
  std::vector<std::string> dims;
  std::vector<TensorSpec> tensors;  // inputs, then outputs, in ABI order
  std::vector<ScalarSpec> scalars;
  std::vector<Workload> workloads;
  std::vector<Workload> sim_workloads;
  Tolerance tolerance;
  std::vector<IgnoredRows> ignore_rows_where;  // empty: every output row is in the contract
  std::string flops;                           // expression over dims; empty when not meaningful
  std::string bytes;                           // expression over dims: minimum bytes moved
  std::string baseline_name;
  std::vector<std::string> baseline_libraries;  // link names, e.g. "cublas" for -lcublas
  std::vector<std::string> banned_symbols;
  std::vector<std::string> rules;
  // Whether kiln_launch may wait for the GPU (a stream or device synchronize, a blocking copy);
  // by default it may not, and doing so fails the worker's hidden_stream_work gate.
  bool allow_host_sync = false;
  std::filesystem::path reference_path;
  // Optional (files.gpu_reference): the exact reference as a kiln_launch on the GPU, computing
  // what the CPU reference computes. With one, the worker checks every output element against
  // it and anchors it to the CPU reference on sampled rows; empty: the task has none.
  std::filesystem::path gpu_reference_path;
  std::filesystem::path baseline_path;
  std::filesystem::path starter_path;
  std::filesystem::path readme_path;
  std::string sha256;  // over every file of the bundle, in a fixed order
  // The noise the task's timings may show (task.json "max_cv", a fraction): kiln task check's
  // gpu_stability budget for each median's 95% interval and the spread of medians over repeats.
  // Unset: the checker's default (--max-cv overrides either).
  std::optional<double> max_cv;
  // Set for a task made from a zoo entry's meta.json test block (load_zoo_task, "zoo:ID"): the
  // entry's folder and its op, whose CPU reference in kb/zoo/references stands in for
  // reference.cpp. Such a task runs on the CPU tools only: it has no baseline and no bundle.
  std::filesystem::path zoo_entry;
  std::string zoo_op;

  bool from_zoo() const { return !zoo_entry.empty(); }
};

// Every file of the bundle in hash order (tasks/FORMAT.md, "Task hash"): task.json, the
// reference, baseline, starter and readme, then the GPU reference when there is one. What a
// client sends a runner and what a run freezes.
std::vector<std::filesystem::path> bundle_files(const Task& task);

// Loads and validates tasks/NAME/. Errors name the file, the field and the problem.
Result<Task> load_task(const std::filesystem::path& dir);

// Every loadable bundle under root (each subdirectory with a task.json), by name.
// Bundles that fail to load are returned in `broken` with their error.
struct TaskCatalog {
  std::vector<Task> tasks;
  std::vector<std::pair<std::filesystem::path, Error>> broken;
};
TaskCatalog load_catalog(const std::filesystem::path& root);

// The contract as JSON, as the get_task tool and kiln://task present it.
nlohmann::json to_json(const Task& task);

// Evaluates a shape or size expression (+ - * / % parentheses, integers, dims).
Result<int64_t> evaluate(const std::string& expression, const std::map<std::string, int64_t>& dims);

}  // namespace kiln::tasks
