#include "kiln/tasks/poison_pattern.h"

#include <cstring>

#include "kiln/tasks/numeric_codec.h"

namespace kiln::tasks {

uint64_t PoisonPattern::bits(kiln_dtype dtype, int which) {
  const bool first = (which & 1) == 0;
  switch (dtype) {
    // Quiet and signalling NaNs with odd payloads; never the canonical 0x7fff/0x7e00.
    case KILN_F16:
      return first ? 0x7e5aull : 0xfd6bull;
    case KILN_BF16:
      return first ? 0x7fa5ull : 0xffd3ull;
    case KILN_F32:
      return first ? 0x7fa5a5a5ull : 0xffd5a5a5ull;
    case KILN_F64:
      return first ? 0x7ff5a5a5a5a5a5a5ull : 0xfffa5a5a5a5a5a5bull;
    case KILN_E4M3:
      return first ? 0x7full : 0xffull;  // the only NaNs e4m3 has
    case KILN_E5M2:
      return first ? 0x7dull : 0xfeull;
    case KILN_I8:
    case KILN_U8:
      return first ? 0x5aull : 0xa5ull;
    case KILN_I32:
      return first ? 0x5aa55aa5ull : 0xa55aa55bull;
    case KILN_I64:
      return first ? 0x5aa55aa55aa55aa5ull : 0xa55aa55aa55aa55bull;
  }
  return 0;
}

void PoisonPattern::fill_host(void* data, int64_t elements, kiln_dtype dtype, uint64_t pattern) {
  const int size = dtype_size(dtype);
  auto* bytes = static_cast<unsigned char*>(data);
  for (int64_t i = 0; i < elements; ++i)
    std::memcpy(bytes + i * size, &pattern, static_cast<size_t>(size));
}

int64_t PoisonPattern::count_host(const void* data, int64_t elements, kiln_dtype dtype,
                                  uint64_t pattern) {
  const int size = dtype_size(dtype);
  const auto* bytes = static_cast<const unsigned char*>(data);
  int64_t count = 0;
  for (int64_t i = 0; i < elements; ++i) {
    uint64_t value = 0;
    std::memcpy(&value, bytes + i * size, static_cast<size_t>(size));
    if (value == pattern) ++count;
  }
  return count;
}

}  // namespace kiln::tasks
