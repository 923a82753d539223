// attention_fwd CPU reference: O = softmax(Q K^T / sqrt(D), causal mask) V and the row
// log-sum-exp LSE, for bf16 Q, K, V, O [B, H, S, D] and fp32 LSE [B, H, S].
//
// The oracle every candidate is checked against, so it favours exactness over speed. For each
// query row i of each (b, h), in this order (gpu_reference.cu repeats it operation for
// operation):
//   s[j] = (sum over d ascending of q[d] * k[j][d]) * scale      scale = 1 / sqrt(D)
//          for keys j < S (j <= i when causal); each product of two bf16 values is exact
//          in float (8 + 8 significant bits) and is added to a double accumulator;
//   m    = max over j of s[j];
//   p[j] = exp(s[j] - m);   l = sum over j ascending of p[j]       (double)
//   O[d] = (sum over j ascending of p[j] * v[j][d]) / l, rounded once to bf16, nearest even;
//   LSE  = m + log(l), rounded once to fp32, nearest even.
// The result does not depend on the number of threads.
//
// Plain C++ with host pointers (no CUDA headers); tensors may have any strides. The harness
// checks sampled batches (the first dim) of large workloads; each batch is computed whole.
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

float bf16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
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

// double -> bf16 bits, round to nearest even straight from double (no rounding through
// float). Overflow goes to infinity.
uint16_t double_to_bf16(double x) {
  const uint16_t sign = std::signbit(x) ? 0x8000u : 0;
  if (std::isnan(x)) return 0x7fc0u;
  const double magnitude = std::fabs(x);
  if (std::isinf(magnitude)) return sign | 0x7f80u;
  if (magnitude < std::ldexp(1.0, -126)) {
    // Subnormal range: units of 2^-133; 128 units is the smallest normal, encoded 0x0080.
    return sign | static_cast<uint16_t>(round_half_even(std::ldexp(magnitude, 133)));
  }
  int exponent = 0;
  std::frexp(magnitude, &exponent);  // magnitude = f * 2^exponent, f in [0.5, 1)
  int e = exponent - 1;              // magnitude in [2^e, 2^(e+1))
  double significand = round_half_even(std::ldexp(magnitude, 7 - e));  // in [128, 256]
  if (significand == 256) {
    significand = 128;
    ++e;
  }
  if (e > 127) return sign | 0x7f80u;
  const auto mantissa = static_cast<uint16_t>(static_cast<int>(significand) - 128);
  return sign | static_cast<uint16_t>((e + 127) << 7) | mantissa;
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

struct Dims {
  int64_t batch, heads, seq, dim;
};

bool is_bhsd(const kiln_tensor& t, kiln_dtype dtype, const Dims& d) {
  return t.dtype == dtype && t.rank == 4 && t.shape[0] == d.batch && t.shape[1] == d.heads &&
         t.shape[2] == d.seq && t.shape[3] == d.dim && t.data != nullptr;
}

bool is_bhs(const kiln_tensor& t, const Dims& d) {
  return t.dtype == KILN_F32 && t.rank == 3 && t.shape[0] == d.batch && t.shape[1] == d.heads &&
         t.shape[2] == d.seq && t.data != nullptr;
}

const uint16_t* element(const kiln_tensor& t, int64_t b, int64_t h, int64_t s, int64_t d) {
  return static_cast<const uint16_t*>(t.data) + b * t.strides[0] + h * t.strides[1] +
         s * t.strides[2] + d * t.strides[3];
}

// One (b, h): Q and V as dense [S][D] floats, K transposed to [D][S] so the score loop runs
// over keys (contiguous, vectorizable) while each score still sums d in ascending order.
struct Head {
  std::vector<float> q, kt, v;
};

Head widen_head(const kiln_tensor* t, int64_t b, int64_t h, const Dims& d) {
  Head head;
  const auto n = static_cast<size_t>(d.seq * d.dim);
  head.q.resize(n);
  head.kt.resize(n);
  head.v.resize(n);
  for (int64_t s = 0; s < d.seq; ++s) {
    for (int64_t c = 0; c < d.dim; ++c) {
      head.q[static_cast<size_t>(s * d.dim + c)] = bf16_to_float(*element(t[0], b, h, s, c));
      head.kt[static_cast<size_t>(c * d.seq + s)] = bf16_to_float(*element(t[1], b, h, s, c));
      head.v[static_cast<size_t>(s * d.dim + c)] = bf16_to_float(*element(t[2], b, h, s, c));
    }
  }
  return head;
}

constexpr int64_t kRowsPerTask = 16;

// Query rows [i0, i1) of one head.
void compute_rows(const Head& head, const Dims& d, bool causal, double scale, int64_t i0,
                  int64_t i1, const kiln_tensor& out, const kiln_tensor& lse, int64_t b,
                  int64_t h) {
  std::vector<double> s(static_cast<size_t>(d.seq));
  std::vector<double> acc(static_cast<size_t>(d.dim));
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t keys = causal ? i + 1 : d.seq;
    std::fill(s.begin(), s.end(), 0.0);
    const float* q = head.q.data() + i * d.dim;
    for (int64_t c = 0; c < d.dim; ++c) {
      const float qc = q[c];
      const float* k = head.kt.data() + c * d.seq;
      for (int64_t j = 0; j < keys; ++j) s[j] += static_cast<double>(qc * k[j]);  // exact product
    }
    double m = -INFINITY;
    for (int64_t j = 0; j < keys; ++j) {
      s[j] *= scale;
      m = std::max(m, s[j]);
    }
    double l = 0;
    for (int64_t j = 0; j < keys; ++j) {
      s[j] = std::exp(s[j] - m);
      l += s[j];
    }
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t j = 0; j < keys; ++j) {
      const double p = s[j];
      const float* v = head.v.data() + j * d.dim;
      for (int64_t c = 0; c < d.dim; ++c) acc[c] += p * static_cast<double>(v[c]);
    }
    auto* o = static_cast<uint16_t*>(out.data) + b * out.strides[0] + h * out.strides[1] +
              i * out.strides[2];
    for (int64_t c = 0; c < d.dim; ++c) o[c * out.strides[3]] = double_to_bf16(acc[c] / l);
    static_cast<float*>(lse.data)[b * lse.strides[0] + h * lse.strides[1] + i * lse.strides[2]] =
        static_cast<float>(m + std::log(l));
  }
}

void run_attention(const kiln_tensor* t, const Dims& d, bool causal) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(d.dim));
  const int64_t heads = d.batch * d.heads;
  std::vector<Head> widened(static_cast<size_t>(heads));
  parallel_for(heads, [&](int64_t bh) {
    widened[static_cast<size_t>(bh)] = widen_head(t, bh / d.heads, bh % d.heads, d);
  });
  const int64_t blocks = (d.seq + kRowsPerTask - 1) / kRowsPerTask;
  parallel_for(heads * blocks, [&](int64_t task) {
    const int64_t bh = task / blocks;
    // Causal rows near the end cost the most: hand those out first.
    const int64_t block = causal ? blocks - 1 - task % blocks : task % blocks;
    const int64_t i0 = block * kRowsPerTask;
    compute_rows(widened[static_cast<size_t>(bh)], d, causal, scale, i0,
                 std::min(d.seq, i0 + kRowsPerTask), t[3], t[4], bh / d.heads, bh % d.heads);
  });
}

}  // namespace

extern "C" int kiln_reference(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                              int n_scalars) {
  if (tensors == nullptr || n_tensors != 5 || scalars == nullptr || n_scalars != 1)
    return KILN_ERR_BAD_ARGUMENT;
  if (scalars[0].dtype != KILN_I64 || (scalars[0].value.i != 0 && scalars[0].value.i != 1))
    return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& q = tensors[0];
  if (q.rank != 4) return KILN_ERR_BAD_ARGUMENT;
  const Dims d{q.shape[0], q.shape[1], q.shape[2], q.shape[3]};
  if (d.batch < 0 || d.heads < 0 || d.seq < 0 || d.dim < 0) return KILN_ERR_BAD_ARGUMENT;
  if (d.batch * d.heads * d.seq == 0) return KILN_OK;
  for (int i = 0; i < 4; ++i)
    if (!is_bhsd(tensors[i], KILN_BF16, d)) return KILN_ERR_BAD_ARGUMENT;
  if (!is_bhs(tensors[4], d)) return KILN_ERR_BAD_ARGUMENT;
  if (d.dim == 0) return KILN_ERR_UNSUPPORTED;  // softmax of no scores
  try {
    run_attention(tensors, d, scalars[0].value.i == 1);
  } catch (const std::bad_alloc&) {
    return KILN_ERR_UNSUPPORTED;  // too large for host memory
  }
  return KILN_OK;
}
