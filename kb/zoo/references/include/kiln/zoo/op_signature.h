// The zoo's op table (kb/zoo/README.md, "Ops and their signatures") as data: for each op,
// its tensors in ABI order with the dtypes they may take and their shapes as dim
// expressions, and its scalars. The meta.json checker and the GPU test read it, so an
// entry whose signature drifts from the table is caught before any kernel runs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kiln/abi.h"

namespace kiln::zoo {

struct OpTensor {
  std::string name;
  std::vector<kiln_dtype> dtypes;  // the choices an entry may make
  std::vector<std::string> shape;  // dim expressions without spaces, e.g. "G+1"
  std::string same_dtype_as;       // an earlier tensor whose dtype this one repeats, or ""
};

struct OpScalar {
  std::string name;
  kiln_dtype dtype;  // KILN_I64 or KILN_F64
};

struct OpSignature {
  std::string op;
  std::vector<OpTensor> inputs;
  std::vector<OpTensor> outputs;
  std::vector<OpScalar> scalars;
};

// Every op, in the README's order.
const std::vector<OpSignature>& op_signatures();
// nullptr for an op the table does not name.
const OpSignature* find_op_signature(std::string_view op);

}  // namespace kiln::zoo
