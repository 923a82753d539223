// grouped_gemm_fp8 CPU reference: for every row r with group g = I[r] >= 0,
//   D[r, n] = sum over k-blocks b of  s(r, n, b) * (SA[r, b] * SB[g, n/128, b]),
//   s(r, n, b) = sum over k in block b of A[r, k] * B[g, n, k],
// and D[r, :] = 0 on rows with I[r] = -1 (outside the contract; never compared).
//
// The oracle every candidate is checked against, so it favours exactness over speed:
// - e4m3 values decode exactly; a product of two has at most 8
//   significant bits and is a multiple of 2^-18 below 2^18, so each block sum s of 128 of them
//   (below 2^25) is exact in double, whatever the order;
// - SA * SB is exact in double (24 + 24 bits); s * (SA * SB) is rounded once, and the blocks
//   are summed in ascending b in one double accumulator, each step rounded once (no fused
//   multiply-add: the harness builds this with -ffp-contract=off);
// - D is rounded to bf16 once, to nearest even, straight from double.
// gpu_reference.cu performs the same operations in the same order. Rows are computed one by
// one from I, so the harness may pass any subset of rows (A, SA, I and D cut alike).
//
// Plain C++ with host pointers (no CUDA headers, nothing but kiln/abi.h from kiln: the harness
// builds it wherever kiln is installed); tensors must be dense row-major.
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

// e4m3 (1 sign, 4 exponent, 3 mantissa bits, bias 7; S.1111.111 is NaN, no infinities) to
// float, exactly.
float decode_e4m3(unsigned v) {
  const unsigned exponent = (v >> 3) & 15u;
  const unsigned mantissa = v & 7u;
  float magnitude = 0;
  if (exponent == 15u && mantissa == 7u) {
    magnitude = std::nanf("");
  } else if (exponent == 0u) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -9);
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 8u), static_cast<int>(exponent) - 10);
  }
  return (v & 0x80u) != 0 ? -magnitude : magnitude;
}

// double -> bf16 bits, rounded to nearest even straight from double (no rounding through float),
// as the GPU's cvt.rn.bf16.f64 (__double2bfloat16) does; overflow goes to infinity.
uint16_t bf16_from_double(double x) {
  if (std::isnan(x)) return 0x7fc0u;
  const uint16_t sign = std::signbit(x) ? 0x8000u : 0;
  const double m = std::fabs(x);
  float value = 0;
  if (m < std::ldexp(1.0, -126)) {
    // bf16 subnormals: units of 2^-133, exact in float.
    value = static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(m, 133)), -133));
  } else {
    int e = 0;
    const double f = std::frexp(m, &e);          // m = f * 2^e, f in [0.5, 1)
    const double q = std::nearbyint(f * 256.0);  // 8 significant bits, ties to even
    const double rounded = std::ldexp(q, e - 8);
    if (rounded >= std::ldexp(1.0, 128)) return sign | 0x7f80u;
    value = static_cast<float>(rounded);  // exact: 8 bits in float's range
  }
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<uint16_t>(sign | (bits >> 16));
}

constexpr int64_t kBlock = 128;  // scale block: 128 channels of A, 128 x 128 of B
constexpr int64_t kTile = 64;    // output columns per work item

bool dense(const kiln_tensor& t, kiln_dtype dtype, int rank) {
  if (t.dtype != dtype || t.rank != rank) return false;
  int64_t stride = 1;
  for (int d = rank; d-- > 0;) {
    if (t.shape[d] < 0) return false;
    if (t.shape[d] > 1 && t.strides[d] != stride) return false;
    stride *= t.shape[d];
  }
  return t.data != nullptr || stride == 0;
}

// Runs body(i) for every i in [0, count) over the machine's threads; which thread takes which
// i never changes a result.
template <typename Body>
void parallel_for(int64_t count, const Body& body) {
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    for (int64_t i = next++; i < count; i = next++) body(i);
  };
  const auto hardware = static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (int64_t t = 1; t < std::min(hardware, count); ++t) {
    try {
      threads.emplace_back(worker);
    } catch (const std::exception&) {
      break;  // no more threads: the ones running finish the work
    }
  }
  worker();
  for (auto& thread : threads) thread.join();
}

struct Problem {
  int64_t rows, groups, N, K, blocks;
  const uint8_t* a;
  const float* sa;
  const uint8_t* b;
  const float* sb;
  const int32_t* index;
  uint16_t* d;
};

// Columns [n0, n0 + kTile) of every row, one group's slab of B decoded at a time.
void compute_tile(const Problem& p, const float* e4m3, int64_t n0) {
  const int64_t n1 = std::min(p.N, n0 + kTile);
  std::vector<float> slab(static_cast<size_t>((n1 - n0) * p.K));
  std::vector<float> row(static_cast<size_t>(p.K));
  for (int64_t g = 0; g < p.groups; ++g) {
    bool decoded = false;
    for (int64_t r = 0; r < p.rows; ++r) {
      if (p.index[r] != g) continue;
      if (!decoded) {
        const uint8_t* bg = p.b + (g * p.N + n0) * p.K;
        for (int64_t i = 0; i < (n1 - n0) * p.K; ++i) slab[static_cast<size_t>(i)] = e4m3[bg[i]];
        decoded = true;
      }
      for (int64_t k = 0; k < p.K; ++k) row[static_cast<size_t>(k)] = e4m3[p.a[r * p.K + k]];
      for (int64_t n = n0; n < n1; ++n) {
        const float* bn = slab.data() + (n - n0) * p.K;
        const float* sbn = p.sb + (g * (p.N / kBlock) + n / kBlock) * p.blocks;
        double acc = 0;
        for (int64_t blk = 0; blk < p.blocks; ++blk) {
          double s = 0;  // exact: see the header
          for (int64_t k = blk * kBlock; k < (blk + 1) * kBlock; ++k)
            s += static_cast<double>(row[static_cast<size_t>(k)] * bn[k]);
          const double scale =
              static_cast<double>(p.sa[r * p.blocks + blk]) * static_cast<double>(sbn[blk]);
          const double term = s * scale;
          acc = acc + term;
        }
        p.d[r * p.N + n] = bf16_from_double(acc);
      }
    }
  }
}

}  // namespace

extern "C" int kiln_reference(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                              int n_scalars) {
  (void)scalars;
  if (tensors == nullptr || n_tensors != 6 || n_scalars != 2) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& a = tensors[0];
  const kiln_tensor& sa = tensors[1];
  const kiln_tensor& b = tensors[2];
  const kiln_tensor& sb = tensors[3];
  const kiln_tensor& idx = tensors[4];
  const kiln_tensor& d = tensors[5];
  if (!dense(a, KILN_E4M3, 2) || !dense(sa, KILN_F32, 2) || !dense(b, KILN_E4M3, 3) ||
      !dense(sb, KILN_F32, 3) || !dense(idx, KILN_I32, 1) || !dense(d, KILN_BF16, 2))
    return KILN_ERR_BAD_ARGUMENT;
  const int64_t rows = a.shape[0];
  const int64_t K = a.shape[1];
  const int64_t groups = b.shape[0];
  const int64_t N = b.shape[1];
  if (K % kBlock != 0 || N % kBlock != 0) return KILN_ERR_UNSUPPORTED;
  const int64_t blocks = K / kBlock;
  if (b.shape[2] != K || sa.shape[0] != rows || sa.shape[1] != blocks || sb.shape[0] != groups ||
      sb.shape[1] != N / kBlock || sb.shape[2] != blocks || idx.shape[0] != rows ||
      d.shape[0] != rows || d.shape[1] != N)
    return KILN_ERR_BAD_ARGUMENT;
  const auto* index = static_cast<const int32_t*>(idx.data);
  for (int64_t r = 0; r < rows; ++r) {
    if (index[r] < -1 || index[r] >= groups) return KILN_ERR_BAD_ARGUMENT;
  }
  auto* out = static_cast<uint16_t*>(d.data);
  for (int64_t r = 0; r < rows; ++r) {
    if (index[r] < 0) std::memset(out + r * N, 0, static_cast<size_t>(N) * sizeof(uint16_t));
  }
  if (rows == 0 || N == 0) return KILN_OK;
  float e4m3[256];
  for (unsigned v = 0; v < 256; ++v) e4m3[v] = decode_e4m3(v);
  const Problem p{rows,
                  groups,
                  N,
                  K,
                  blocks,
                  static_cast<const uint8_t*>(a.data),
                  static_cast<const float*>(sa.data),
                  static_cast<const uint8_t*>(b.data),
                  static_cast<const float*>(sb.data),
                  index,
                  out};
  try {
    parallel_for((N + kTile - 1) / kTile, [&](int64_t t) { compute_tile(p, e4m3, t * kTile); });
  } catch (const std::bad_alloc&) {
    return KILN_ERR_UNSUPPORTED;  // too large for host memory
  }
  return KILN_OK;
}
