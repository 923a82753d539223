// Bit casts between floating-point values and their integer encodings, usable on
// host and device (std::bit_cast is not available in nvcc's device code).
#pragma once

#include <cstdint>
#include <cstring>

#include "kiln/tasks/host_device.h"

namespace kiln::tasks {

KILN_HD inline uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(x));
#else
  uint64_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

KILN_HD inline double double_from_bits(uint64_t bits) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  double x = 0;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

KILN_HD inline uint32_t bits_of(float x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__float_as_uint(x));
#else
  uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

KILN_HD inline float float_from_bits(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float x = 0;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

}  // namespace kiln::tasks
