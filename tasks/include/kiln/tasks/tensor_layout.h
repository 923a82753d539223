// A workload's tensors as the harness allocates them: dtype, shape, dense row-major
// strides, byte size, and whether the tensor is an output. Built from the task's
// signature by evaluating its shape expressions at the workload's dims.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/abi.h"
#include "kiln/base/result.h"
#include "kiln/tasks/task.h"

namespace kiln::tasks {

// "f16" -> KILN_F16 and so on; an error names the unknown dtype.
Result<kiln_dtype> parse_dtype(const std::string& name);
const char* dtype_name(kiln_dtype dtype);

inline constexpr uint8_t kRowIgnored = 1;
inline constexpr uint8_t kRowUntouched = 2;

struct TensorLayout {
  std::string name;
  kiln_dtype dtype = KILN_F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // elements, dense row-major
  std::string leading_dim;       // the shape[0] expression as written, e.g. "M"
  bool is_output = false;
  Distribution distribution;  // inputs only
  // Inputs whose values the dims fix (distribution.fixed_by_dims()): their dense bytes, the same
  // in every draw; empty for drawn inputs.
  std::vector<unsigned char> fixed_bytes;
  // Outputs: one flag per row (first-dim index), kRowIgnored when the row is outside the
  // contract (task.json "ignore_rows_where"), kRowUntouched when it is outside the contract and
  // must keep the poison (IgnoredRows::untouched); empty when every row is checked.
  std::vector<uint8_t> ignored_rows;

  int64_t elements() const;
  int64_t bytes() const;
  // Elements in the rows the contract covers (all of them without ignored_rows).
  int64_t checked_elements() const;
  // Row-major multi-index of a flat element index.
  std::vector<int64_t> index_of(int64_t flat) const;
};

struct ScalarValue {
  std::string name;
  kiln_dtype dtype = KILN_F64;
  int64_t i = 0;
  double f = 0;
};

struct WorkloadLayout {
  std::string workload;
  std::map<std::string, int64_t> dims;
  std::vector<TensorLayout> tensors;  // ABI order: inputs, then outputs
  std::vector<ScalarValue> scalars;
  double flops = 0;  // 0 when the task gives no expression
  double bytes = 0;

  // kiln_scalar values for the call; the names point into this object.
  std::vector<kiln_scalar> abi_scalars() const;
  // kiln_tensor descriptors for `data` (one pointer per tensor, ABI order).
  std::vector<kiln_tensor> abi_tensors(const std::vector<void*>& data) const;
};

Result<WorkloadLayout> layout_workload(const Task& task, const Workload& workload);

// The values of a group_index input at `dims` (kiln/group_layout.h), `rows` of them, as int64;
// an error names the expression or argument that is out of range.
Result<std::vector<int64_t>> group_index_values(const Distribution& distribution,
                                                const std::map<std::string, int64_t>& dims,
                                                int64_t rows);

// The workload of that name; an error lists the names there are.
Result<Workload> find_workload(const Task& task, const std::string& name);

}  // namespace kiln::tasks
