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

struct TensorLayout {
  std::string name;
  kiln_dtype dtype = KILN_F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // elements, dense row-major
  std::string leading_dim;       // the shape[0] expression as written, e.g. "M"
  bool is_output = false;
  Distribution distribution;  // inputs only

  int64_t elements() const;
  int64_t bytes() const;
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

// The workload of that name; an error lists the names there are.
Result<Workload> find_workload(const Task& task, const std::string& name);

}  // namespace kiln::tasks
