// rmsnorm CPU reference: y[t,h] = x[t,h] / sqrt(mean_h(x[t,:]^2) + eps) * w[h], bf16 in/out.
//
// The oracle every candidate is checked against, so it favours exactness over speed:
// bf16 values are widened exactly to double, the mean of squares is summed in double in
// ascending h, the scale 1/sqrt(ms + eps) and both products are taken in double, and y
// is rounded to bf16 once, to nearest even. NaN and infinities propagate as IEEE says.
// Rows are independent, so threads split them and the result does not depend on how.
//
// Plain C++ with host pointers (no CUDA headers); tensors may have any strides.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include "kiln/abi.h"

namespace {

double bf16_to_double(uint16_t bits) {
  const uint32_t widened = static_cast<uint32_t>(bits) << 16;  // bf16 is the top half of an fp32
  float out = 0;
  std::memcpy(&out, &widened, sizeof out);
  return static_cast<double>(out);
}

// double -> bf16 bits, round to nearest even straight from double (no double rounding
// through float). Overflow goes to infinity, as __float2bfloat16_rn does.
uint16_t double_to_bf16(double x) {
  if (std::isnan(x)) return 0x7fc0u;
  const uint16_t sign = std::signbit(x) ? 0x8000u : 0;
  const double magnitude = std::fabs(x);
  if (std::isinf(magnitude)) return sign | 0x7f80u;
  if (magnitude == 0) return sign;
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude = f * 2^exponent, f in [0.5, 1)
  int e = exponent - 1;              // magnitude in [2^e, 2^(e+1))
  // Significand with 7 fraction bits: units of 2^(e-7); below the normal range (e < -126)
  // the unit stays 2^-133 (subnormals).
  const int unit_exponent = std::max(e, -126) - 7;
  const double scaled = std::ldexp(magnitude, -unit_exponent);
  double whole = std::floor(scaled);
  const double fraction = scaled - whole;
  if (fraction > 0.5 || (fraction == 0.5 && std::fmod(whole, 2.0) != 0)) whole += 1;
  auto units = static_cast<uint32_t>(whole);
  if (e < -126)
    return sign | static_cast<uint16_t>(units);  // subnormal (a carry makes it the smallest normal)
  if (units == 256) {                            // rounded up to the next power of two
    units = 128;
    ++e;
  }
  if (e > 127) return sign | 0x7f80u;
  return sign | static_cast<uint16_t>(((e + 127) << 7) | (units - 128));
}

bool is_bf16(const kiln_tensor& t, int rank) {
  return t.dtype == KILN_BF16 && t.rank == rank && t.data != nullptr;
}

}  // namespace

extern "C" int kiln_reference(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                              int n_scalars) {
  if (tensors == nullptr || n_tensors != 3 || scalars == nullptr || n_scalars != 1)
    return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];
  const kiln_tensor& w = tensors[1];
  const kiln_tensor& y = tensors[2];
  if (!is_bf16(x, 2) || !is_bf16(w, 1) || !is_bf16(y, 2)) return KILN_ERR_BAD_ARGUMENT;
  const int64_t T = x.shape[0];
  const int64_t H = x.shape[1];
  if (T < 0 || H < 1 || w.shape[0] != H || y.shape[0] != T || y.shape[1] != H)
    return KILN_ERR_BAD_ARGUMENT;
  if (scalars[0].dtype != KILN_F64) return KILN_ERR_BAD_ARGUMENT;
  const double eps = scalars[0].value.f;

  const auto* xd = static_cast<const uint16_t*>(x.data);
  const auto* wd = static_cast<const uint16_t*>(w.data);
  auto* yd = static_cast<uint16_t*>(y.data);
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    for (int64_t t = next++; t < T; t = next++) {
      double sum = 0;
      for (int64_t h = 0; h < H; ++h) {
        const double v = bf16_to_double(xd[t * x.strides[0] + h * x.strides[1]]);
        sum += v * v;
      }
      const double scale = 1.0 / std::sqrt(sum / static_cast<double>(H) + eps);
      for (int64_t h = 0; h < H; ++h) {
        const double v = bf16_to_double(xd[t * x.strides[0] + h * x.strides[1]]);
        const double g = bf16_to_double(wd[h * w.strides[0]]);
        yd[t * y.strides[0] + h * y.strides[1]] = double_to_bf16(v * scale * g);
      }
    }
  };
  const auto hardware = static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  const int64_t n_threads = std::min(hardware, std::max<int64_t>(T, 1));
  std::vector<std::thread> threads;
  for (int64_t i = 1; i < n_threads; ++i) {
    try {
      threads.emplace_back(worker);
    } catch (const std::exception&) {
      break;  // the threads running (and this one) finish the rows
    }
  }
  worker();
  for (auto& thread : threads) thread.join();
  return KILN_OK;
}
