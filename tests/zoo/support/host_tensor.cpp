#include "host_tensor.h"

#include "kiln/zoo/numeric.h"

namespace kiln::zoo {

int64_t HostTensor::element_count() const {
  int64_t count = 1;
  for (const int64_t extent : shape) count *= extent;
  return count;
}

kiln_tensor HostTensor::descriptor(void* data) const {
  kiln_tensor t{};
  t.data = data;
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(shape.size());
  int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    t.shape[d] = shape[static_cast<size_t>(d)];
    t.strides[d] = stride;
    stride *= shape[static_cast<size_t>(d)];
  }
  t.name = name.c_str();
  return t;
}

double HostTensor::at(int64_t index) const { return decode_element(dtype, bytes.data(), index); }

HostTensor make_host_tensor(std::string name, kiln_dtype dtype, std::vector<int64_t> shape) {
  HostTensor t{std::move(name), dtype, std::move(shape), {}};
  t.bytes.assign(static_cast<size_t>(t.element_count()) * dtype_size(dtype), 0);
  return t;
}

std::string format_index(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    const int64_t extent = shape[d] > 0 ? shape[d] : 1;
    index[d] = flat % extent;
    flat /= extent;
  }
  std::string out = "[";
  for (size_t d = 0; d < index.size(); ++d) out += (d ? ", " : "") + std::to_string(index[d]);
  return out + "]";
}

}  // namespace kiln::zoo
