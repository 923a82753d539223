// attention_fwd exact reference on the GPU: the same values as reference.cpp.
//
// The worker checks every output element of every call against this and anchors it to the CPU
// reference on sampled batches once per workload. The arithmetic is the CPU reference's, in
// the same order, in double: each score sums the exact products q[d] * k[j][d] over d
// ascending (__dmul_rn / __dadd_rn, so nvcc contracts nothing into an fma the CPU does not
// do), then multiplies by scale = 1/sqrt(D) (computed on the host as the CPU does); m is the
// maximum; p[j] = exp(s[j] - m); l sums p over j ascending; O[d] sums p[j] * v[j][d] over j
// ascending, is divided by l and rounded once to bf16 (nearest even, straight from double);
// LSE = m + log(l) rounded once to fp32. exp and log are CUDA's double-precision functions
// (within 1 ulp of the exact value, like glibc's), so an element can differ from the CPU's
// only when a double lands within an ulp of a rounding boundary of bf16 or fp32.
//
// One block of 128 threads per query row, the row's scores in shared memory (8 bytes per
// key): simple rather than fast, and no library.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kiln/abi.h"

namespace {

constexpr int kThreads = 128;

struct View {  // a [B, H, S, D] bf16 tensor with any strides
  const uint16_t* data;
  int64_t strides[4];
};

__device__ double load(const View& t, int64_t b, int64_t h, int64_t s, int64_t d) {
  const uint16_t bits =
      t.data[b * t.strides[0] + h * t.strides[1] + s * t.strides[2] + d * t.strides[3]];
  return static_cast<double>(__uint_as_float(static_cast<uint32_t>(bits) << 16));
}

__device__ double round_half_even(double x) {
  const double whole = floor(x);
  const double fraction = x - whole;
  if (fraction > 0.5) return whole + 1;
  if (fraction < 0.5) return whole;
  return fmod(whole, 2.0) == 0 ? whole : whole + 1;
}

// double -> bf16 bits, nearest even, as reference.cpp's double_to_bf16.
__device__ uint16_t double_to_bf16(double x) {
  const uint16_t sign = signbit(x) ? 0x8000u : 0;
  if (isnan(x)) return 0x7fc0u;
  const double magnitude = fabs(x);
  if (isinf(magnitude)) return sign | 0x7f80u;
  if (magnitude < ldexp(1.0, -126))
    return sign | static_cast<uint16_t>(round_half_even(ldexp(magnitude, 133)));
  int exponent = 0;
  frexp(magnitude, &exponent);
  int e = exponent - 1;
  double significand = round_half_even(ldexp(magnitude, 7 - e));
  if (significand == 256) {
    significand = 128;
    ++e;
  }
  if (e > 127) return sign | 0x7f80u;
  const auto mantissa = static_cast<uint16_t>(static_cast<int>(significand) - 128);
  return sign | static_cast<uint16_t>((e + 127) << 7) | mantissa;
}

__global__ void __launch_bounds__(kThreads)
    exact_attention(View q, View k, View v, uint16_t* out, int64_t out_strides0,
                    int64_t out_strides1, int64_t out_strides2, int64_t out_strides3, float* lse,
                    int64_t lse_strides0, int64_t lse_strides1, int64_t lse_strides2, int heads,
                    int seq, int dim, int causal, double scale) {
  extern __shared__ double smem[];
  double* qrow = smem;     // [dim]
  double* s = smem + dim;  // [seq]
  __shared__ double reduce[kThreads];
  __shared__ double row_max;
  __shared__ double row_sum;

  const int64_t row = blockIdx.x;  // over B * H * S
  const int i = static_cast<int>(row % seq);
  const int64_t bh = row / seq;
  const int64_t b = bh / heads;
  const int64_t h = bh % heads;
  const int tid = static_cast<int>(threadIdx.x);
  const int keys = causal ? i + 1 : seq;

  for (int d = tid; d < dim; d += kThreads) qrow[d] = load(q, b, h, i, d);
  __syncthreads();
  double mx = -INFINITY;
  for (int j = tid; j < keys; j += kThreads) {
    double acc = 0;
    for (int d = 0; d < dim; ++d) acc = __dadd_rn(acc, __dmul_rn(qrow[d], load(k, b, h, j, d)));
    acc = __dmul_rn(acc, scale);
    s[j] = acc;
    mx = fmax(mx, acc);
  }
  reduce[tid] = mx;
  __syncthreads();
  if (tid == 0) {
    double m = -INFINITY;
    for (int t = 0; t < kThreads; ++t) m = fmax(m, reduce[t]);  // max is exact in any order
    row_max = m;
  }
  __syncthreads();
  const double m = row_max;
  for (int j = tid; j < keys; j += kThreads) s[j] = exp(__dadd_rn(s[j], -m));
  __syncthreads();
  if (tid == 0) {
    double l = 0;
    for (int j = 0; j < keys; ++j) l = __dadd_rn(l, s[j]);  // ascending, as the CPU sums
    row_sum = l;
  }
  __syncthreads();
  const double l = row_sum;
  for (int d = tid; d < dim; d += kThreads) {
    double acc = 0;
    for (int j = 0; j < keys; ++j) acc = __dadd_rn(acc, __dmul_rn(s[j], load(v, b, h, j, d)));
    out[b * out_strides0 + h * out_strides1 + i * out_strides2 + d * out_strides3] =
        double_to_bf16(__ddiv_rn(acc, l));
  }
  if (tid == 0)
    lse[b * lse_strides0 + h * lse_strides1 + i * lse_strides2] =
        __double2float_rn(__dadd_rn(m, log(l)));
}

bool same_bhsd(const kiln_tensor& t, kiln_dtype dtype, const int64_t* shape) {
  if (t.dtype != dtype || t.rank != 4) return false;
  for (int i = 0; i < 4; ++i)
    if (t.shape[i] != shape[i]) return false;
  return true;
}

View view(const kiln_tensor& t) {
  return {static_cast<const uint16_t*>(t.data),
          {t.strides[0], t.strides[1], t.strides[2], t.strides[3]}};
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  if (tensors == nullptr || n_tensors != 5 || scalars == nullptr || n_scalars != 1)
    return KILN_ERR_BAD_ARGUMENT;
  if (scalars[0].dtype != KILN_I64 || (scalars[0].value.i != 0 && scalars[0].value.i != 1))
    return KILN_ERR_BAD_ARGUMENT;
  const int64_t* shape = tensors[0].shape;
  if (tensors[0].rank != 4) return KILN_ERR_BAD_ARGUMENT;
  for (int i = 0; i < 4; ++i)
    if (!same_bhsd(tensors[i], KILN_BF16, shape)) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& lse = tensors[4];
  if (lse.dtype != KILN_F32 || lse.rank != 3 || lse.shape[0] != shape[0] ||
      lse.shape[1] != shape[1] || lse.shape[2] != shape[2])
    return KILN_ERR_BAD_ARGUMENT;
  const int64_t rows = shape[0] * shape[1] * shape[2];
  if (rows == 0) return KILN_OK;
  if (shape[3] < 1 || rows > 2147483647 || shape[2] > 2147483647 || shape[3] > 4096)
    return KILN_ERR_UNSUPPORTED;
  const size_t smem = static_cast<size_t>(shape[2] + shape[3]) * sizeof(double);
  int device = 0;
  int max_smem = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
          cudaSuccess)
    return KILN_ERR_LAUNCH;
  // The static shared memory (reduce, row_max, row_sum) comes out of the same budget.
  if (smem + (kThreads + 2) * sizeof(double) > static_cast<size_t>(max_smem))
    return KILN_ERR_UNSUPPORTED;
  if (cudaFuncSetAttribute(exact_attention, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(smem)) != cudaSuccess)
    return KILN_ERR_LAUNCH;
  const kiln_tensor& o = tensors[3];
  exact_attention<<<static_cast<unsigned>(rows), kThreads, smem, stream>>>(
      view(tensors[0]), view(tensors[1]), view(tensors[2]), static_cast<uint16_t*>(o.data),
      o.strides[0], o.strides[1], o.strides[2], o.strides[3], static_cast<float*>(lse.data),
      lse.strides[0], lse.strides[1], lse.strides[2], static_cast<int>(shape[1]),
      static_cast<int>(shape[2]), static_cast<int>(shape[3]), static_cast<int>(scalars[0].value.i),
      1.0 / std::sqrt(static_cast<double>(shape[3])));
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
