#include "kiln/ptx/variable.h"

namespace kiln::ptx {

std::optional<uint64_t> Variable::size_bytes() const {
  const uint32_t bits = type_bits(type);
  if (bits == 0 || bits % 8 != 0) return std::nullopt;
  uint64_t size = bits / 8;
  if (vector_width > 0) size *= vector_width;
  for (const std::optional<uint64_t>& dim : dims) {
    if (!dim) return std::nullopt;
    if (*dim != 0 && size > UINT64_MAX / *dim) return std::nullopt;
    size *= *dim;
  }
  return size;
}

}  // namespace kiln::ptx
