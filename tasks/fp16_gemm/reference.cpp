// fp16_gemm CPU reference: C[M,N] = A[M,K] * B[N,K]^T with fp16 A, B, C.
//
// The oracle every candidate is checked against, so it favours exactness over
// speed: fp16 inputs are widened exactly, each product is exact in float (11+11
// significant bits), products are summed in double in ascending k, and C is rounded
// to fp16 once, to nearest even. NaN and infinities propagate as IEEE arithmetic
// says. The result does not depend on the number of threads.
//
// Plain C++ with host pointers (no CUDA headers); tensors may have any strides.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <new>
#include <thread>
#include <vector>

#include "kiln/abi.h"

namespace {

// fp16 bits -> float, exact for every input (normals, subnormals, infinities, NaN).
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  uint32_t bits = 0;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // infinity or NaN (payload kept)
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);  // rebias 15 -> 127
  } else {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  float out = 0;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// Rounds a significand scaled to an integer range to the nearest integer, ties to even.
double round_half_even(double x) {
  const double whole = std::floor(x);
  const double fraction = x - whole;  // exact: x < 2^53
  if (fraction > 0.5) return whole + 1;
  if (fraction < 0.5) return whole;
  return std::fmod(whole, 2.0) == 0 ? whole : whole + 1;
}

// double -> fp16 bits, round to nearest even directly from double (no double rounding
// through float). Overflow goes to infinity, as the GPU's __float2half_rn does.
uint16_t double_to_half(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000u : 0;
  if (std::isnan(x)) return 0x7e00u;
  const double magnitude = std::fabs(x);
  // 65520 lies halfway between 65504 (the largest half) and 2^16; ties go to even, i.e. up.
  if (magnitude >= 65520.0) return sign | 0x7c00u;
  if (magnitude < std::ldexp(1.0, -14)) {
    // Subnormal range: units of 2^-24. A result of 1024 is the smallest normal, whose
    // encoding 0x0400 is the same integer.
    const auto units = static_cast<uint16_t>(round_half_even(std::ldexp(magnitude, 24)));
    return sign | units;
  }
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude = f * 2^exponent, f in [0.5, 1)
  int e = exponent - 1;              // magnitude in [2^e, 2^(e+1))
  double significand = round_half_even(std::ldexp(magnitude, 10 - e));  // in [1024, 2048]
  if (significand == 2048) {
    significand = 1024;
    ++e;
  }
  if (e > 15) return sign | 0x7c00u;
  const auto mantissa = static_cast<uint16_t>(static_cast<int>(significand) - 1024);
  return sign | static_cast<uint16_t>((e + 15) << 10) | mantissa;
}

bool is_fp16_matrix(const kiln_tensor& t) {
  return t.dtype == KILN_F16 && t.rank == 2 && t.shape[0] >= 0 && t.shape[1] >= 0 &&
         (t.data != nullptr || t.shape[0] * t.shape[1] == 0);
}

// Runs body(i) for every i in [0, count), spread over the machine's threads; which thread
// takes which i never changes a result.
template <typename Body>
void parallel_for(int64_t count, const Body& body) {
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    for (int64_t i = next++; i < count; i = next++) body(i);
  };
  const auto hardware = static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  const int64_t n_threads = std::min(hardware, count);
  std::vector<std::thread> threads;
  for (int64_t t = 1; t < n_threads; ++t) {
    try {
      threads.emplace_back(worker);
    } catch (const std::exception&) {
      break;  // no more threads available: the ones running (and this one) finish the work
    }
  }
  worker();
  for (auto& thread : threads) thread.join();
}

// Copies an fp16 matrix (any strides) into a dense row-major float matrix.
std::vector<float> widen(const kiln_tensor& t) {
  const int64_t rows = t.shape[0];
  const int64_t cols = t.shape[1];
  std::vector<float> out(static_cast<size_t>(rows * cols));
  const auto* data = static_cast<const uint16_t*>(t.data);
  parallel_for(rows, [&](int64_t r) {
    for (int64_t c = 0; c < cols; ++c) {
      out[static_cast<size_t>(r * cols + c)] =
          half_to_float(data[r * t.strides[0] + c * t.strides[1]]);
    }
  });
  return out;
}

constexpr int64_t kTile = 64;    // outputs per tile side; a multiple of kMicro
constexpr int64_t kMicro = 4;    // a 4x4 block of outputs shares each loaded value
constexpr int64_t kChunk = 512;  // k-steps per pass, so the tile's rows stay in cache

// Computes a tile of C: rows [i0, i1), columns [j0, j1), at most kTile each. Each
// element's sum runs over k in ascending order in one double accumulator, so any
// tiling or thread count gives bit-identical results.
void compute_tile(const std::vector<float>& a, const std::vector<float>& b, int64_t K, int64_t i0,
                  int64_t i1, int64_t j0, int64_t j1, const kiln_tensor& c) {
  double acc[kTile][kTile] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kChunk) {
    const int64_t k1 = std::min(K, k0 + kChunk);
    for (int64_t i = i0; i < i1; i += kMicro) {
      for (int64_t j = j0; j < j1; j += kMicro) {
        // Rows past the tile's edge repeat its last row; their sums are never stored.
        const float* ar[kMicro];
        const float* br[kMicro];
        for (int64_t u = 0; u < kMicro; ++u) {
          ar[u] = a.data() + std::min(i + u, i1 - 1) * K;
          br[u] = b.data() + std::min(j + u, j1 - 1) * K;
        }
        double s[kMicro][kMicro];
        for (int64_t u = 0; u < kMicro; ++u) {
          for (int64_t v = 0; v < kMicro; ++v) s[u][v] = acc[i - i0 + u][j - j0 + v];
        }
        for (int64_t k = k0; k < k1; ++k) {
          for (int64_t u = 0; u < kMicro; ++u) {
            for (int64_t v = 0; v < kMicro; ++v) {
              s[u][v] += static_cast<double>(ar[u][k] * br[v][k]);  // product exact in float
            }
          }
        }
        for (int64_t u = 0; u < kMicro; ++u) {
          for (int64_t v = 0; v < kMicro; ++v) acc[i - i0 + u][j - j0 + v] = s[u][v];
        }
      }
    }
  }
  auto* out = static_cast<uint16_t*>(c.data);
  for (int64_t i = i0; i < i1; ++i) {
    for (int64_t j = j0; j < j1; ++j) {
      out[i * c.strides[0] + j * c.strides[1]] = double_to_half(acc[i - i0][j - j0]);
    }
  }
}

void run_gemm(const kiln_tensor& ta, const kiln_tensor& tb, const kiln_tensor& tc) {
  const int64_t M = ta.shape[0];
  const int64_t K = ta.shape[1];
  const int64_t N = tb.shape[0];
  const std::vector<float> a = widen(ta);
  const std::vector<float> b = widen(tb);

  const int64_t tiles_m = (M + kTile - 1) / kTile;
  const int64_t tiles_n = (N + kTile - 1) / kTile;
  const int64_t tiles = tiles_m * tiles_n;
  parallel_for(tiles, [&](int64_t t) {
    const int64_t i0 = (t / tiles_n) * kTile;
    const int64_t j0 = (t % tiles_n) * kTile;
    compute_tile(a, b, K, i0, std::min(M, i0 + kTile), j0, std::min(N, j0 + kTile), tc);
  });
}

}  // namespace

extern "C" int kiln_reference(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                              int n_scalars) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 3 || n_scalars != 0) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];
  const kiln_tensor& b = tensors[1];
  const kiln_tensor& c = tensors[2];
  if (!is_fp16_matrix(a) || !is_fp16_matrix(b) || !is_fp16_matrix(c)) return KILN_ERR_BAD_ARGUMENT;
  // A is M x K, B is N x K, C is M x N.
  if (b.shape[1] != a.shape[1] || c.shape[0] != a.shape[0] || c.shape[1] != b.shape[0]) {
    return KILN_ERR_BAD_ARGUMENT;
  }
  if (c.shape[0] == 0 || c.shape[1] == 0) return KILN_OK;
  try {
    run_gemm(a, b, c);
  } catch (const std::bad_alloc&) {
    return KILN_ERR_UNSUPPORTED;  // too large for host memory
  }
  return KILN_OK;
}
