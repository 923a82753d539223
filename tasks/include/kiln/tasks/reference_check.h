// Correctness against the task's CPU reference (reference.cpp, kiln_reference).
//
// The reference is exact but slow, so for large workloads the harness checks a sample
// of output rows: tensors whose first extent is the output's first dim (A and C of a
// GEMM, x and y of a norm) are cut down to the chosen rows, the others are passed
// whole, and the reference computes just those rows. Every element of every output is
// still compared on the GPU against the baseline; the sampled rows pin the result to
// the exact answer, including rows the harness knows a perturbation touched.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/abi.h"
#include "kiln/base/result.h"
#include "kiln/tasks/output_comparison.h"
#include "kiln/tasks/tensor_layout.h"

namespace kiln::tasks {

// How much reference work one check may cost, in the task's flops.
// Both the reference's arithmetic and the host-side comparison cost time, so the
// budget bounds flops and compared elements: a GEMM is bound by the first, a
// memory-bound op (RMSNorm over 16384 x 16384) by the second.
struct ReferenceBudget {
  double full_check_flops = 2e10;    // up to this (and full_check_elements), every row is checked
  double sampled_check_flops = 4e9;  // above it, rows are sampled to about this cost
  int64_t full_check_elements = 1 << 24;  // output elements
  int64_t sampled_check_elements = 1 << 22;
  int64_t min_rows = 8;
};

struct RowPlan {
  bool full = true;
  std::vector<int64_t> rows;  // sorted, distinct; empty when full
  std::string describe(int64_t total_rows) const;
};

class RowSampler {
 public:
  // Whether each tensor follows the sampled rows (same first-dim expression as output 0).
  static std::vector<bool> sliced_tensors(const WorkloadLayout& layout);
  // Full when cheap enough or when some output cannot be sliced; else the first and last
  // rows, `required` rows, and rows drawn from `seed` up to the budget.
  static RowPlan plan(const WorkloadLayout& layout, const ReferenceBudget& budget, uint64_t seed,
                      const std::vector<int64_t>& required);
};

// Host copies of every tensor of a workload (dense row-major bytes, ABI order).
using HostTensors = std::vector<std::vector<unsigned char>>;

// The reference's answer for the planned rows.
struct ReferenceRun {
  RowPlan plan;
  HostTensors outputs;                       // per tensor; filled for outputs only
  std::vector<std::vector<int64_t>> shapes;  // per tensor, after cutting
};

class ReferenceCheck {
 public:
  ReferenceCheck(kiln_reference_fn reference, Tolerance tolerance)
      : reference_(reference), tolerance_(tolerance) {}

  // Runs the reference on the inputs in `host` (output slots ignored) for the planned rows.
  Result<ReferenceRun> run(const WorkloadLayout& layout, const HostTensors& host,
                           const RowPlan& plan) const;
  // Compares full candidate outputs in `host` with the reference run, on the planned rows.
  // `poison` lists each output's pattern, to count elements never written.
  ErrorStats compare(const WorkloadLayout& layout, const ReferenceRun& run, const HostTensors& host,
                     const std::vector<uint64_t>& poison) const;
  // run() then compare().
  Result<ErrorStats> check(const WorkloadLayout& layout, const HostTensors& host,
                           const RowPlan& plan, const std::vector<uint64_t>& poison) const;

  const Tolerance& tolerance() const { return tolerance_; }

 private:
  kiln_reference_fn reference_;
  Tolerance tolerance_;
};

}  // namespace kiln::tasks
