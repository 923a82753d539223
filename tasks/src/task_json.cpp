// to_json: the task contract as get_task and kiln://task present it to an agent.
// It mirrors task.json (see tasks/FORMAT.md) and adds what an agent must know
// besides: the entry point, the correctness rule, the scoring rule and the hash.
#include <nlohmann/json.hpp>

#include "kiln/tasks/task.h"

namespace kiln::tasks {
namespace {

nlohmann::json workload_json(const Workload& workload) {
  nlohmann::json out = {{"name", workload.name}};
  for (const auto& [dim, value] : workload.dims) out[dim] = value;
  return out;
}

nlohmann::json workloads_json(const std::vector<Workload>& workloads) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& workload : workloads) out.push_back(workload_json(workload));
  return out;
}

}  // namespace

nlohmann::json to_json(const Task& task) {
  nlohmann::json inputs = nlohmann::json::array();
  nlohmann::json outputs = nlohmann::json::array();
  nlohmann::json distributions = nlohmann::json::object();
  for (const auto& tensor : task.tensors) {
    nlohmann::json entry = {
        {"name", tensor.name}, {"dtype", tensor.dtype}, {"shape", tensor.shape}};
    (tensor.is_output ? outputs : inputs).push_back(std::move(entry));
    if (!tensor.is_output && tensor.distribution.kind == "group_index") {
      const Distribution& d = tensor.distribution;
      distributions[tensor.name] = {
          {"kind", d.kind},   {"groups", d.groups}, {"rows_per_group", d.rows_per_group},
          {"align", d.align}, {"seed", d.seed},     {"spread", d.spread},
          {"padding", -1}};
    } else if (!tensor.is_output && tensor.distribution.kind == "constant") {
      distributions[tensor.name] = {{"kind", "constant"}, {"value", tensor.distribution.low}};
    } else if (!tensor.is_output && tensor.distribution.kind == "group_offsets") {
      const Distribution& d = tensor.distribution;
      distributions[tensor.name] = {{"kind", d.kind},
                                    {"groups", d.groups},
                                    {"rows", d.rows_per_group},
                                    {"align", d.align},
                                    {"seed", d.seed},
                                    {"rule",
                                     "offsets[0] = 0 <= offsets[g] <= offsets[g+1], offsets[G] = "
                                     "rows; group g is rows [offsets[g], offsets[g+1]), its size "
                                     "a multiple of align, some groups may be empty"}};
    } else if (!tensor.is_output && tensor.distribution.kind == "indices") {
      distributions[tensor.name] = {{"kind", "indices"},
                                    {"extent", tensor.distribution.extent},
                                    {"rule", "uniform integers in [0, extent)"}};
    } else if (!tensor.is_output && tensor.distribution.kind == "distinct_indices") {
      distributions[tensor.name] = {
          {"kind", "distinct_indices"},
          {"extent", tensor.distribution.extent},
          {"rule",
           "integers in [0, extent), distinct within each row of the last dimension "
           "(a 1-D tensor is one row); fixed by the dims"}};
    } else if (!tensor.is_output && tensor.distribution.kind == "permutation") {
      distributions[tensor.name] = {
          {"kind", "permutation"},
          {"rule", "a permutation of 0 .. elements-1 over the whole tensor; fixed by the dims"}};
    } else if (!tensor.is_output) {
      distributions[tensor.name] = {{"kind", tensor.distribution.kind},
                                    {"low", tensor.distribution.low},
                                    {"high", tensor.distribution.high}};
    }
  }
  nlohmann::json scalars = nlohmann::json::array();
  for (const auto& scalar : task.scalars) {
    scalars.push_back({{"name", scalar.name}, {"dtype", scalar.dtype}, {"value", scalar.value}});
  }
  auto relative = [&task](const std::filesystem::path& path) {
    return path.lexically_relative(task.dir).generic_string();
  };
  nlohmann::json out = {
      {"name", task.name},
      {"title", task.title},
      {"description", task.description},
      {"arch", task.arch},
      {"dims", task.dims},
      {"signature", {{"inputs", inputs}, {"outputs", outputs}, {"scalars", scalars}}},
      {"entry_point",
       "extern \"C\" int kiln_launch(const kiln_tensor* tensors, int n_tensors, "
       "const kiln_scalar* scalars, int n_scalars, cudaStream_t stream); tensors in signature "
       "order (inputs, then outputs), declared in kiln/abi.h"},
      {"input_distribution", distributions},
      {"workloads", workloads_json(task.workloads)},
      {"sim_workloads", workloads_json(task.sim_workloads)},
      {"tolerance",
       {{"atol", task.tolerance.atol},
        {"rtol", task.tolerance.rtol},
        {"max_mismatch_fraction", task.tolerance.max_mismatch_fraction},
        {"rule",
         "an output element passes when |out - ref| <= atol + rtol * |ref|; NaN and infinities "
         "must match the reference exactly; a workload passes when at most "
         "max_mismatch_fraction of its output elements fail"}}},
      {"flops", task.flops},
      {"bytes", task.bytes},
      {"baseline",
       {{"name", task.baseline_name},
        {"file", relative(task.baseline_path)},
        {"libraries", task.baseline_libraries}}},
      {"scoring",
       {{"metric", "geomean_speedup"},
        {"rule",
         "geometric mean of baseline_time / candidate_time over all workloads; one failed "
         "workload fails the candidate"}}},
      {"banned_symbols", task.banned_symbols},
      {"banned_symbols_rule",
       "symbol-name prefixes; a candidate whose object code references a symbol starting with "
       "one of them is refused at link time"},
      {"rules", task.rules},
      {"allow_host_sync", task.allow_host_sync},
      {"files",
       {{"reference", relative(task.reference_path)},
        {"baseline", relative(task.baseline_path)},
        {"starter", relative(task.starter_path)},
        {"readme", relative(task.readme_path)}}},
      {"sha256", task.sha256},
  };
  if (!task.ignore_rows_where.empty()) {
    nlohmann::json ignored = nlohmann::json::array();
    for (const auto& rule : task.ignore_rows_where) {
      if (rule.untouched) {
        ignored.push_back({{"output", rule.output},
                           {"index", rule.index},
                           {"rule", "only the rows of " + rule.output + " that " + rule.index +
                                        " lists are written; every other row must be left as "
                                        "it was (the harness checks each byte)"}});
        continue;
      }
      ignored.push_back(
          {{"output", rule.output},
           {"index", rule.index},
           {"equals", rule.equals},
           {"rule", "rows r of " + rule.output + " with " + rule.index +
                        "[r] == " + std::to_string(rule.equals) +
                        " are outside the contract: never compared, never scored; write "
                        "them or not"}});
    }
    out["ignore_rows_where"] = ignored;
  }
  if (!task.gpu_reference_path.empty())
    out["files"]["gpu_reference"] = relative(task.gpu_reference_path);
  if (!task.tolerance.outputs.empty()) {
    for (const auto& [name, own] : task.tolerance.outputs)
      out["tolerance"]["outputs"][name] = {{"atol", own.atol}, {"rtol", own.rtol}};
  }
  if (task.max_cv) out["max_cv"] = *task.max_cv;
  if (task.from_zoo()) {
    // No bundle: the op's CPU reference and the entry's files stand in for it.
    out["baseline"] = {{"name", "none"}, {"file", ""}, {"libraries", nlohmann::json::array()}};
    out["scoring"] = {{"metric", "none"},
                      {"rule",
                       "a zoo task is a correctness contract on the CPU simulator; it is "
                       "not benchmarked or scored"}};
    out["files"] = {{"reference", "kb/zoo/references (op " + task.zoo_op + ")"},
                    {"starter", "kernel.cu (the entry's own kernel)"},
                    {"readme", "NOTES.md"}};
    out["zoo"] = {{"entry", task.zoo_entry.filename().string()},
                  {"op", task.zoo_op},
                  {"rule",
                   "simulate, synccheck, racecheck and compile take this task; benchmark and "
                   "profile do not (no baseline). Without `candidate` or `source`, they run the "
                   "entry's own kernel.cu"}};
  }
  return out;
}

}  // namespace kiln::tasks
