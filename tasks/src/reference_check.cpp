#include "kiln/tasks/reference_check.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "kiln/tasks/hash_mix.h"
#include "kiln/tasks/numeric_codec.h"

namespace kiln::tasks {

std::string RowPlan::describe(int64_t total_rows) const {
  if (full) return "every element against the CPU reference";
  return std::to_string(rows.size()) + " of " + std::to_string(total_rows) +
         " rows against the CPU reference, every element against the baseline on the GPU";
}

std::vector<bool> RowSampler::sliced_tensors(const WorkloadLayout& layout) {
  std::string lead;
  for (const auto& t : layout.tensors) {
    if (t.is_output) {
      lead = t.leading_dim;
      break;
    }
  }
  std::vector<bool> sliced;
  for (const auto& t : layout.tensors)
    sliced.push_back(!lead.empty() && t.leading_dim == lead && t.shape.size() >= 1);
  return sliced;
}

RowPlan RowSampler::plan(const WorkloadLayout& layout, const ReferenceBudget& budget, uint64_t seed,
                         const std::vector<int64_t>& required) {
  RowPlan plan;
  const std::vector<bool> sliced = sliced_tensors(layout);
  int64_t rows = 0;
  int64_t elements = 0;
  for (size_t t = 0; t < layout.tensors.size(); ++t) {
    if (!layout.tensors[t].is_output) continue;
    if (!sliced[t]) return plan;  // an output that cannot be cut by rows: check it whole
    rows = layout.tensors[t].shape[0];
    elements += layout.tensors[t].elements();
  }
  const double cost = layout.flops > 0 ? layout.flops : layout.bytes;
  if (rows <= 0 || (cost <= budget.full_check_flops && elements <= budget.full_check_elements))
    return plan;
  const double per_row = cost / static_cast<double>(rows);
  const double elements_per_row = static_cast<double>(elements) / static_cast<double>(rows);
  const double affordable =
      std::min(per_row > 0 ? budget.sampled_check_flops / per_row : 1e18,
               static_cast<double>(budget.sampled_check_elements) / elements_per_row);
  const auto wanted = std::clamp<int64_t>(static_cast<int64_t>(affordable), budget.min_rows, rows);
  // Rows outside the contract (ignore_rows_where) are never worth a reference row.
  std::vector<uint8_t> ignored;
  bool every_output_masked = true;
  for (const auto& t : layout.tensors) {
    if (t.is_output && t.ignored_rows.empty()) every_output_masked = false;
    if (t.is_output && !t.ignored_rows.empty()) {
      ignored.resize(t.ignored_rows.size(), 1);
      for (size_t r = 0; r < t.ignored_rows.size(); ++r) ignored[r] &= t.ignored_rows[r];
    }
  }
  if (!every_output_masked) ignored.clear();
  std::set<int64_t> chosen;
  auto choose = [&](int64_t r) {
    if (r >= 0 && r < rows && (ignored.empty() || ignored[static_cast<size_t>(r)] == 0))
      chosen.insert(r);
  };
  choose(0);
  choose(rows - 1);
  for (int64_t r : required) choose(r);
  const uint64_t key = stream_key(seed, 0x726f7773ull /* "rows" */, 0, 0);
  for (uint64_t i = 0;
       static_cast<int64_t>(chosen.size()) < wanted && i < static_cast<uint64_t>(4 * rows); ++i) {
    choose(static_cast<int64_t>(unit_draw(key, i) * static_cast<double>(rows)));
  }
  if (chosen.empty()) chosen.insert(0);  // every row ignored: one row, compared as nothing
  if (static_cast<int64_t>(chosen.size()) >= rows) return plan;
  plan.full = false;
  plan.rows.assign(chosen.begin(), chosen.end());
  return plan;
}

Result<ReferenceRun> ReferenceCheck::run(const WorkloadLayout& layout, const HostTensors& host,
                                         const RowPlan& plan) const {
  const std::vector<bool> sliced = RowSampler::sliced_tensors(layout);
  ReferenceRun out;
  out.plan = plan;
  // Gathered copies: sliced tensors keep only the planned rows.
  HostTensors work(layout.tensors.size());
  out.shapes.resize(layout.tensors.size());
  for (size_t t = 0; t < layout.tensors.size(); ++t) {
    const TensorLayout& tensor = layout.tensors[t];
    out.shapes[t] = tensor.shape;
    const bool cut = !plan.full && sliced[t];
    if (cut) out.shapes[t][0] = static_cast<int64_t>(plan.rows.size());
    const int64_t row_bytes = tensor.bytes() / tensor.shape[0];
    int64_t bytes = dtype_size(tensor.dtype);
    for (int64_t e : out.shapes[t]) bytes *= e;
    if (tensor.is_output) {
      work[t].assign(static_cast<size_t>(bytes), 0);
      continue;
    }
    if (host[t].size() != static_cast<size_t>(tensor.bytes())) {
      return make_error("internal: host copy of " + tensor.name + " has the wrong size");
    }
    if (!cut) continue;  // passed from `host` as it is
    work[t].resize(static_cast<size_t>(bytes));
    for (size_t i = 0; i < plan.rows.size(); ++i) {
      std::memcpy(work[t].data() + static_cast<int64_t>(i) * row_bytes,
                  host[t].data() + plan.rows[i] * row_bytes, static_cast<size_t>(row_bytes));
    }
  }
  std::vector<kiln_tensor> tensors;
  for (size_t t = 0; t < layout.tensors.size(); ++t) {
    kiln_tensor k{};
    // The reference reads its inputs only; an input passed whole is not copied.
    const bool whole_input = !layout.tensors[t].is_output && (plan.full || !sliced[t]);
    k.data = whole_input ? const_cast<unsigned char*>(host[t].data()) : work[t].data();
    k.dtype = layout.tensors[t].dtype;
    k.rank = static_cast<int32_t>(out.shapes[t].size());
    int64_t stride = 1;
    for (size_t d = out.shapes[t].size(); d-- > 0;) {
      k.shape[d] = out.shapes[t][d];
      k.strides[d] = stride;
      stride *= out.shapes[t][d];
    }
    k.name = layout.tensors[t].name.c_str();
    tensors.push_back(k);
  }
  std::vector<kiln_scalar> scalars = layout.abi_scalars();
  const int status = reference_(tensors.data(), static_cast<int>(tensors.size()), scalars.data(),
                                static_cast<int>(scalars.size()));
  if (status != KILN_OK) {
    return make_error("the CPU reference returned status " + std::to_string(status) +
                      " for workload " + layout.workload +
                      "; the task's reference.cpp needs fixing");
  }
  out.outputs.resize(layout.tensors.size());
  for (size_t t = 0; t < layout.tensors.size(); ++t) {
    if (layout.tensors[t].is_output) out.outputs[t] = std::move(work[t]);
  }
  return out;
}

ErrorStats ReferenceCheck::compare(const WorkloadLayout& layout, const ReferenceRun& run,
                                   const HostTensors& host,
                                   const std::vector<uint64_t>& poison) const {
  const std::vector<bool> sliced = RowSampler::sliced_tensors(layout);
  ErrorStats total;
  size_t output_index = 0;
  for (size_t t = 0; t < layout.tensors.size(); ++t) {
    const TensorLayout& tensor = layout.tensors[t];
    if (!tensor.is_output) continue;
    const uint64_t pattern = output_index < poison.size() ? poison[output_index] : 0;
    ++output_index;
    const bool cut = !run.plan.full && sliced[t];
    const int64_t row_bytes = tensor.bytes() / tensor.shape[0];
    std::vector<unsigned char> actual;
    const unsigned char* actual_data = host[t].data();
    if (cut) {
      actual.resize(run.outputs[t].size());
      for (size_t i = 0; i < run.plan.rows.size(); ++i) {
        std::memcpy(actual.data() + static_cast<int64_t>(i) * row_bytes,
                    host[t].data() + run.plan.rows[i] * row_bytes, static_cast<size_t>(row_bytes));
      }
      actual_data = actual.data();
    }
    int64_t elements = 1;
    for (int64_t e : run.shapes[t]) elements *= e;
    // Rows outside the contract, as rows of the (possibly cut) buffers.
    std::vector<uint8_t> ignored;
    if (!tensor.ignored_rows.empty()) {
      if (cut) {
        for (int64_t row : run.plan.rows) ignored.push_back(tensor.ignored_rows[row]);
      } else {
        ignored = tensor.ignored_rows;
      }
    }
    total.merge(compare_host(actual_data, run.outputs[t].data(), tensor.dtype, elements,
                             run.shapes[t], tolerance_.for_output(tensor.name), pattern,
                             cut ? &run.plan.rows : nullptr, ignored.empty() ? nullptr : &ignored));
  }
  return total;
}

Result<ErrorStats> ReferenceCheck::check(const WorkloadLayout& layout, const HostTensors& host,
                                         const RowPlan& plan,
                                         const std::vector<uint64_t>& poison) const {
  auto reference = run(layout, host, plan);
  if (!reference) return reference.error();
  return compare(layout, *reference, host, poison);
}

}  // namespace kiln::tasks
