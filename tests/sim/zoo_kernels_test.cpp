// Real zoo kernels (kb/zoo/*/kernel.cu), their device code compiled to PTX by nvcc, launched
// straight through Device at tiny shapes and compared with a CPU computation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kiln/sim/tensor_map.h"
#include "sim_test_util.h"

namespace kiln::sim::testing {
namespace {

// Exact f16 encoding of values that f16 represents exactly (the tests only use such values).
uint16_t to_half(float v) {
  if (v == 0) return std::signbit(v) ? 0x8000 : 0;
  int e = 0;
  float m = std::frexp(std::fabs(v), &e);  // v = m * 2^e, m in [0.5, 1)
  uint32_t mantissa = static_cast<uint32_t>(std::ldexp(m, 11)) & 0x3ff;
  uint32_t exponent = static_cast<uint32_t>(e - 1 + 15);
  return static_cast<uint16_t>((v < 0 ? 0x8000 : 0) | (exponent << 10) | mantissa);
}

float from_half(uint16_t h) {
  int exponent = (h >> 10) & 0x1f;
  int mantissa = h & 0x3ff;
  float v = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -24)
                          : std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  return (h & 0x8000) ? -v : v;
}

constexpr const char* kNoPtx = "no PTX for this zoo entry (building it needs the CUDA toolkit)";

class ZooKernelsTest : public SimTest {
 public:
  // Loads kb/zoo/ENTRY as PTX and finds the .entry whose name contains every part.
  bool open(const std::string& entry, const std::vector<std::string>& parts) {
    std::string ptx = built_ptx(entry + ".ptx");
    if (ptx.empty()) return false;
    size_t at = 0;
    while ((at = ptx.find(".entry ", at)) != std::string::npos) {
      at += 7;
      std::string name = ptx.substr(at, ptx.find('(', at) - at);
      bool all = true;
      for (const std::string& p : parts) all = all && name.find(p) != std::string::npos;
      if (all) {
        kernel_ = name;
        break;
      }
    }
    module_ = load(ptx);
    return !kernel_.empty();
  }

  // Packs arguments (each given as 64 bits) at the offsets and sizes the kernel declares.
  std::vector<std::byte> pack(const std::vector<uint64_t>& args) {
    Result<KernelInfo> info = device_.kernel(module_, kernel_);
    EXPECT_TRUE(info.ok());
    std::vector<std::byte> bytes(info->param_bytes);
    EXPECT_EQ(info->params.size(), args.size());
    for (size_t i = 0; i < args.size() && i < info->params.size(); ++i) {
      std::memcpy(bytes.data() + info->params[i].offset, &args[i], info->params[i].size);
    }
    return bytes;
  }

  LaunchReport go(Dim3 grid, Dim3 block, const std::vector<uint64_t>& args, uint32_t smem = 0) {
    LaunchConfig config;
    config.grid = grid;
    config.block = block;
    config.dynamic_shared_bytes = smem;
    Result<LaunchReport> r = device_.launch(module_, kernel_, config, pack(args));
    EXPECT_TRUE(r.ok());
    for (const LaunchFault& f : r->faults) {
      ADD_FAILURE() << f.kind << ": " << f.message << " [" << f.instruction << "]";
    }
    return *r;
  }

  // C = A B^T for f16 A (M x K) and B (N x K), checked against a double-precision reference.
  void check_gemm(uint32_t m, uint32_t n, uint32_t k, Dim3 grid, Dim3 block, bool pairs_flag,
                  uint32_t smem = 0) {
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> pick(-8, 8);
    std::vector<float> a(m * k), b(n * k);
    std::vector<uint16_t> ah(m * k), bh(n * k);
    for (size_t i = 0; i < a.size(); ++i) ah[i] = to_half(a[i] = pick(rng) / 8.0f);
    for (size_t i = 0; i < b.size(); ++i) bh[i] = to_half(b[i] = pick(rng) / 8.0f);
    uint64_t pa = upload(ah), pb = upload(bh), pc = zeros<uint16_t>(m * n);
    std::vector<uint64_t> args = {pa, pb, pc, m, n, k, k, k, n};
    if (pairs_flag) args.push_back(1);
    LaunchReport r = go(grid, block, args, smem);
    std::vector<uint16_t> c = download<uint16_t>(pc, m * n);
    for (uint32_t i = 0; i < m; ++i) {
      for (uint32_t j = 0; j < n; ++j) {
        double ref = 0;
        for (uint32_t q = 0; q < k; ++q) ref += double(a[i * k + q]) * b[j * k + q];
        ASSERT_NEAR(from_half(c[i * n + j]), ref, 1e-3 * std::fabs(ref) + 1e-3)
            << "C[" << i << "][" << j << "]";
      }
    }
    EXPECT_GT(r.stats.lane_instructions, 0u);
  }

  std::string kernel_;
  ModuleHandle module_ = 0;
};

TEST_F(ZooKernelsTest, GemmNaiveMatchesTheCpu) {
  if (!open("gemm_naive", {"gemm_tn_naive_kernel"})) GTEST_SKIP() << kNoPtx;
  check_gemm(16, 64, 40, {2, 2}, {32, 8}, false);
}

TEST_F(ZooKernelsTest, GemmMmaSyncLdmatrixMatchesTheCpu) {
  if (!open("gemm_mma_sync_ldmatrix", {"gemm_tn_mma_kernel"})) GTEST_SKIP() << kNoPtx;
  check_gemm(128, 128, 64, {1, 1}, {256}, true);
}

TEST_F(ZooKernelsTest, GemmCpAsyncMultistageMatchesTheCpu) {
  if (!open("gemm_cp_async_multistage", {"gemm_tn_multistage_kernel", "6__half"}))
    GTEST_SKIP() << kNoPtx;
  check_gemm(128, 128, 256, {1, 1}, {256}, true, 4 * 256 * 40 * 2);
}

TEST_F(ZooKernelsTest, ReduceWarpShuffleSumsEveryElement) {
  if (!open("reduce_warp_shuffle", {"reduce_sum_atomic_kernel"})) GTEST_SKIP() << kNoPtx;
  const uint32_t n = 10003;
  std::vector<float> x(n);
  double ref = 0;
  for (uint32_t i = 0; i < n; ++i) ref += x[i] = static_cast<float>((i * 37) % 101) / 64.0f;
  uint64_t px = upload(x), py = zeros<float>(1);
  go({4}, {256}, {px, n, 1, py});
  EXPECT_NEAR(download<float>(py, 1)[0], ref, 1e-5 * ref);
}

TEST_F(ZooKernelsTest, SoftmaxOnlineMatchesTheCpu) {
  if (!open("softmax_online", {"softmax_online_kernel", "ILi256ELb0E"})) GTEST_SKIP() << kNoPtx;
  const uint32_t rows = 5, cols = 300;
  std::vector<float> x(rows * cols);
  for (uint32_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 4;
  uint64_t px = upload(x), py = zeros<float>(rows * cols);
  go({rows}, {256}, {px, py, rows, cols, cols, cols});
  std::vector<float> y = download<float>(py, rows * cols);
  for (uint32_t r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (uint32_t c = 0; c < cols; ++c) mx = std::max<double>(mx, x[r * cols + c]);
    for (uint32_t c = 0; c < cols; ++c) sum += std::exp(x[r * cols + c] - mx);
    for (uint32_t c = 0; c < cols; ++c) {
      double ref = std::exp(x[r * cols + c] - mx) / sum;
      ASSERT_NEAR(y[r * cols + c], ref, 1e-6 + 1e-5 * ref) << r << "," << c;
    }
  }
}

struct alignas(64) TensorMapParam {
  unsigned char bytes[kTensorMapBytes];
};

// A row-major [rows, cols] f16 matrix read in boxes of box_rows x 64 with 128-byte swizzle, as
// the entry's host code asks cuTensorMapEncodeTiled for.
TensorMapParam f16_map(uint64_t address, uint64_t rows, uint64_t cols, uint32_t box_rows) {
  TensorMapDesc d;
  d.rank = 2;
  d.data_type = 6;  // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
  d.element_bytes = 2;
  d.global_address = address;
  d.global_dim[0] = cols;
  d.global_dim[1] = rows;
  d.global_stride_bytes[0] = 2;
  d.global_stride_bytes[1] = cols * 2;
  d.box_dim[0] = 64;
  d.box_dim[1] = box_rows;
  d.element_strides[0] = d.element_strides[1] = 1;
  d.swizzle = 3;  // CU_TENSOR_MAP_SWIZZLE_128B
  TensorMapParam p;
  encode_tensor_map(d, p.bytes);
  return p;
}

TEST_F(ZooKernelsTest, GemmWgmmaTmaMatchesTheCpu) {
  if (!open("gemm_wgmma_tma", {"gemm_wgmma_tma_kernel"})) GTEST_SKIP() << kNoPtx;
  const uint32_t m = 128, n = 256, k = 192;
  std::mt19937 rng(13);
  std::uniform_int_distribution<int> pick(-8, 8);
  std::vector<float> a(m * k), b(n * k);
  std::vector<uint16_t> ah(m * k), bh(n * k);
  for (size_t i = 0; i < a.size(); ++i) ah[i] = to_half(a[i] = pick(rng) / 8.0f);
  for (size_t i = 0; i < b.size(); ++i) bh[i] = to_half(b[i] = pick(rng) / 8.0f);
  uint64_t pa = upload(ah), pb = upload(bh), pc = zeros<uint16_t>(m * n);
  TensorMapParam map_a = f16_map(pa, m, k, 128), map_b = f16_map(pb, n, k, 128);
  Result<KernelInfo> info = device_.kernel(module_, kernel_);
  ASSERT_TRUE(info.ok());
  ASSERT_EQ(info->params.size(), 8u);
  std::vector<std::byte> params(info->param_bytes);
  std::memcpy(params.data() + info->params[0].offset, map_a.bytes, kTensorMapBytes);
  std::memcpy(params.data() + info->params[1].offset, map_b.bytes, kTensorMapBytes);
  std::vector<uint64_t> rest = {pc, m, n, k, n, 1};
  for (size_t i = 0; i < rest.size(); ++i) {
    std::memcpy(params.data() + info->params[2 + i].offset, &rest[i], info->params[2 + i].size);
  }
  LaunchConfig config;
  config.grid = {n / 128, m / 128};
  config.block = {256};
  config.dynamic_shared_bytes = 1024 + 3 * 32768 + 2 * 3 * 8;
  Result<LaunchReport> r = device_.launch(module_, kernel_, config, params);
  ASSERT_TRUE(r.ok());
  for (const LaunchFault& f : r->faults) ADD_FAILURE() << f.kind << ": " << f.message;
  std::vector<uint16_t> c = download<uint16_t>(pc, m * n);
  for (uint32_t i = 0; i < m; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      double ref = 0;
      for (uint32_t q = 0; q < k; ++q) ref += double(a[i * k + q]) * b[j * k + q];
      ASSERT_NEAR(from_half(c[i * n + j]), ref, 1e-3 * std::fabs(ref) + 1e-3)
          << "C[" << i << "][" << j << "]";
    }
  }
}

// Flash attention with wgmma (S = Q K^T from K-major operands, O = P V with V read N-major
// through a transposed descriptor), fed by TMA; one head, 128 queries and keys, D = 64.
TEST_F(ZooKernelsTest, AttentionHopperWgmmaMatchesTheCpu) {
  if (!open("attention_hopper_wgmma", {"attention_kernel", "ILb0ELi64E"})) GTEST_SKIP() << kNoPtx;
  const uint32_t seq = 128, d = 64;
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> pick(-8, 8);
  std::vector<float> q(seq * d), k(seq * d), v(seq * d);
  std::vector<uint16_t> qh(seq * d), kh(seq * d), vh(seq * d);
  for (size_t i = 0; i < q.size(); ++i) {
    qh[i] = to_half(q[i] = pick(rng) / 8.0f);
    kh[i] = to_half(k[i] = pick(rng) / 8.0f);
    vh[i] = to_half(v[i] = pick(rng) / 8.0f);
  }
  uint64_t pq = upload(qh), pk = upload(kh), pv = upload(vh), po = zeros<uint16_t>(seq * d);
  TensorMapParam mq = f16_map(pq, seq, d, 128), mk = f16_map(pk, seq, d, 128),
                 mv = f16_map(pv, seq, d, 128);
  Result<KernelInfo> info = device_.kernel(module_, kernel_);
  ASSERT_TRUE(info.ok());
  ASSERT_EQ(info->params.size(), 9u);  // the last, lse, stays 0: no log-sum-exp output
  std::vector<std::byte> params(info->param_bytes);
  std::memcpy(params.data() + info->params[0].offset, mq.bytes, kTensorMapBytes);
  std::memcpy(params.data() + info->params[1].offset, mk.bytes, kTensorMapBytes);
  std::memcpy(params.data() + info->params[2].offset, mv.bytes, kTensorMapBytes);
  float scale = 1.0f / std::sqrt(static_cast<float>(d));
  float scale_log2 = scale * 1.4426950408889634f;
  int32_t heads = 1, seq_i = static_cast<int32_t>(seq), causal = 0;
  std::memcpy(params.data() + info->params[3].offset, &po, 8);
  std::memcpy(params.data() + info->params[4].offset, &heads, 4);
  std::memcpy(params.data() + info->params[5].offset, &seq_i, 4);
  std::memcpy(params.data() + info->params[6].offset, &causal, 4);
  std::memcpy(params.data() + info->params[7].offset, &scale_log2, 4);
  LaunchConfig config;
  config.grid = {seq / 128, 1, 1};
  config.block = {256};
  config.dynamic_shared_bytes = 1024 + 5 * 16384 + 64;
  Result<LaunchReport> r = device_.launch(module_, kernel_, config, params);
  ASSERT_TRUE(r.ok());
  for (const LaunchFault& f : r->faults) ADD_FAILURE() << f.kind << ": " << f.message;
  std::vector<uint16_t> o = download<uint16_t>(po, seq * d);
  for (uint32_t i = 0; i < seq; ++i) {
    std::vector<double> p(seq);
    double mx = -1e300, sum = 0;
    for (uint32_t j = 0; j < seq; ++j) {
      double s = 0;
      for (uint32_t c = 0; c < d; ++c) s += double(q[i * d + c]) * k[j * d + c];
      p[j] = s * scale;
      mx = std::max(mx, p[j]);
    }
    for (double& x : p) sum += x = std::exp(x - mx);
    for (uint32_t c = 0; c < d; ++c) {
      double ref = 0;
      for (uint32_t j = 0; j < seq; ++j) ref += p[j] / sum * v[j * d + c];
      ASSERT_NEAR(from_half(o[i * d + c]), ref, 5e-3) << "O[" << i << "][" << c << "]";
    }
  }
}

}  // namespace
}  // namespace kiln::sim::testing
