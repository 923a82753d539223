#include "reference_run.h"

#include <algorithm>
#include <optional>
#include <set>

#include "kiln/zoo/references.h"

namespace kiln::zoo {
namespace {

// Multiply-adds of the reference and how the output splits into rows, for the ops that
// can be sampled; {0, 0, 0} for the others.
struct Cost {
  int64_t multiply_adds;
  int64_t rows;
  int64_t row_length;
};

Cost cost_of(const std::string& op, const ZooCase& c) {
  if (op == "gemm_tn" || op == "gemm_tn_fp8" || op == "gemm_tn_int8" || op == "grouped_gemm_tn") {
    const HostTensor& out = c.outputs.at(0);  // C[M, N]
    const int64_t K = c.inputs.at(0).shape.at(1);
    return {out.shape[0] * out.shape[1] * K, out.shape[0], out.shape[1]};
  }
  if (op == "grouped_gemm_masked") {
    const HostTensor& out = c.outputs.at(0);  // C[G, M, N], rows flattened over [G, M]
    const int64_t K = c.inputs.at(0).shape.at(2);
    const int64_t rows = out.shape[0] * out.shape[1];
    return {rows * out.shape[2] * K, rows, out.shape[2]};
  }
  if (op == "attention_fwd") {
    const auto& q = c.inputs.at(0).shape;  // [B, H, S, D]
    return {2 * q[0] * q[1] * q[2] * q[2] * q[3], q[0] * q[1] * q[2], q[3]};
  }
  return {0, 0, 0};
}

// `count` distinct rows of [0, total): the first and last row, the rest uniformly random.
std::vector<int64_t> sample(int64_t total, int64_t count, uint64_t seed) {
  std::set<int64_t> chosen = {0, total - 1};
  uint64_t state = seed | 1;
  while (static_cast<int64_t>(chosen.size()) < std::min(count, total)) {
    state ^= state << 13;  // xorshift64
    state ^= state >> 7;
    state ^= state << 17;
    chosen.insert(static_cast<int64_t>(state % static_cast<uint64_t>(total)));
  }
  return {chosen.begin(), chosen.end()};
}

// The rows an op writes when it writes only some (a KV-cache append: the rows at positions[T] of
// k_cache and v_cache[S, HK, D]), sorted; none for ops that write all of their outputs.
std::optional<std::vector<int64_t>> written_rows(const std::string& op, const ZooCase& c) {
  if (op != "kv_cache_append_rope") return std::nullopt;
  const HostTensor& positions = c.inputs.at(2);
  std::vector<int64_t> rows;
  for (int64_t t = 0; t < positions.element_count(); ++t)
    rows.push_back(static_cast<int64_t>(positions.at(t)));
  std::sort(rows.begin(), rows.end());
  return rows;
}

std::string status_text(int status) {
  switch (status) {
    case KILN_ERR_BAD_ARGUMENT:
      return "KILN_ERR_BAD_ARGUMENT: the signature or shape in meta.json does not fit the op "
             "(see kb/zoo/README.md, \"Ops and their signatures\")";
    case KILN_ERR_UNSUPPORTED:
      return "KILN_ERR_UNSUPPORTED: out of host memory";
    default:
      return "status " + std::to_string(status);
  }
}

}  // namespace

ReferenceRun run_reference(const std::string& op, ZooCase& test_case, uint64_t seed, int64_t budget,
                           int64_t sample_rows) {
  ReferenceRun run;
  const kiln_reference_fn full = find_zoo_reference(op);
  if (full == nullptr) {
    run.status = KILN_ERR_BAD_ARGUMENT;
    run.error = "no CPU reference for op '" + op + "'";
    return run;
  }
  for (const HostTensor& out : test_case.outputs) {
    run.expected.push_back(make_host_tensor(out.name, out.dtype, out.shape));
  }
  std::vector<kiln_tensor> tensors;
  for (auto& t : test_case.inputs) tensors.push_back(t.descriptor());
  for (auto& t : run.expected) tensors.push_back(t.descriptor());
  const auto n_tensors = static_cast<int>(tensors.size());
  const auto n_scalars = static_cast<int>(test_case.scalars.size());
  const kiln_scalar* scalars = test_case.scalars.empty() ? nullptr : test_case.scalars.data();

  const Cost cost = cost_of(op, test_case);
  const RowReferenceFn row_reference = find_zoo_row_reference(op);
  if (row_reference != nullptr && cost.multiply_adds > budget && cost.rows > sample_rows) {
    // As many rows as a quarter of the budget allows, from sample_rows to 8x that.
    const int64_t per_row = std::max<int64_t>(1, cost.multiply_adds / cost.rows);
    const int64_t count = std::clamp(budget / 4 / per_row, sample_rows, 8 * sample_rows);
    run.rows = sample(cost.rows, count, seed);
    run.row_length = cost.row_length;
    run.coverage = std::to_string(run.rows->size()) + " of " + std::to_string(cost.rows) +
                   " rows (sampled: the full reference would take " +
                   std::to_string(cost.multiply_adds) + " multiply-adds)";
    run.status = row_reference(tensors.data(), n_tensors, scalars, n_scalars, *run.rows);
  } else {
    run.coverage = "all elements";
    run.status = full(tensors.data(), n_tensors, scalars, n_scalars);
    if (auto rows = written_rows(op, test_case); rows && run.status == KILN_OK) {
      const auto& shape = test_case.outputs.at(0).shape;
      run.row_length = shape.at(1) * shape.at(2);
      run.coverage = "the " + std::to_string(rows->size()) + " of " + std::to_string(shape.at(0)) +
                     " rows the op writes (the others must be left untouched)";
      run.rows = std::move(rows);
      run.others_untouched = true;
    }
  }
  if (run.status != KILN_OK)
    run.error = "the CPU reference for " + op + " returned " + status_text(run.status);
  return run;
}

}  // namespace kiln::zoo
