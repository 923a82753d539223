// A tensor in host memory with a dense row-major layout, and the kiln_tensor that
// describes it (or a device copy of it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/abi.h"

namespace kiln::zoo {

struct HostTensor {
  std::string name;
  kiln_dtype dtype = KILN_F32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;  // element_count() * dtype_size(dtype)

  int64_t element_count() const;
  // The descriptor for `data` (this tensor's bytes, or a device copy): row-major strides in
  // elements. It points at this->name, so it is valid while this HostTensor lives.
  kiln_tensor descriptor(void* data) const;
  kiln_tensor descriptor() { return descriptor(bytes.data()); }
  double at(int64_t index) const;  // element `index` widened to double
};

// Allocates a zero-filled dense tensor.
HostTensor make_host_tensor(std::string name, kiln_dtype dtype, std::vector<int64_t> shape);

// "[3, 7]" for a flat index into `shape`.
std::string format_index(const std::vector<int64_t>& shape, int64_t flat);

}  // namespace kiln::zoo
