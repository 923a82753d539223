// Checks tasks/fp16_gemm/reference.cpp (compiled into this test binary) against a
// naive double-precision GEMM and against hand-worked fp16 rounding cases.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kiln/abi.h"

extern "C" int kiln_reference(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                              int n_scalars);

namespace {

// fp16 bits -> double, written independently of the reference's converter.
double decode(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  const double sign = (h & 0x8000) != 0 ? -1.0 : 1.0;
  if (exponent == 0x1f) return mantissa != 0 ? std::nan("") : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// True when `h` is `x` rounded to fp16 to nearest, ties to even: no finite
// neighbour of h is closer to x. Overflow to infinity is checked separately.
bool is_rounded(uint16_t h, double x) {
  const double value = decode(h);
  if (std::isinf(value)) return std::fabs(x) >= 65520.0 && std::signbit(value) == std::signbit(x);
  const double error = std::fabs(value - x);
  for (int step : {-1, 1}) {
    const int neighbour_bits = static_cast<int>(h & 0x7fff) + step;
    if (neighbour_bits < 0 || neighbour_bits >= 0x7c00) continue;
    const auto neighbour = static_cast<uint16_t>((h & 0x8000) | neighbour_bits);
    const double other = std::fabs(decode(neighbour) - x);
    if (other < error) return false;
    if (other == error && (h & 1) != 0) return false;  // a tie must go to the even mantissa
  }
  return true;
}

kiln_tensor matrix(std::vector<uint16_t>& data, int64_t rows, int64_t cols, const char* name) {
  kiln_tensor t{};
  t.data = data.data();
  t.dtype = KILN_F16;
  t.rank = 2;
  t.shape[0] = rows;
  t.shape[1] = cols;
  t.strides[0] = cols;
  t.strides[1] = 1;
  t.name = name;
  return t;
}

// Random fp16 values with magnitudes from 2^-10 to just under 2, either sign.
std::vector<uint16_t> random_halves(size_t count, std::mt19937& random) {
  std::uniform_int_distribution<int> sign(0, 1);
  std::uniform_int_distribution<int> exponent(5, 15);
  std::uniform_int_distribution<int> mantissa(0, 1023);
  std::vector<uint16_t> out(count);
  for (auto& h : out) {
    h = static_cast<uint16_t>((sign(random) << 15) | (exponent(random) << 10) | mantissa(random));
  }
  return out;
}

int run(std::vector<uint16_t>& a, std::vector<uint16_t>& b, std::vector<uint16_t>& c, int64_t M,
        int64_t N, int64_t K) {
  const kiln_tensor tensors[3] = {matrix(a, M, K, "A"), matrix(b, N, K, "B"), matrix(c, M, N, "C")};
  return kiln_reference(tensors, 3, nullptr, 0);
}

TEST(Fp16GemmReference, MatchesNaiveDoubleGemmCorrectlyRounded) {
  std::mt19937 random(7);
  const int64_t shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {33, 17, 40}, {64, 64, 64}, {70, 130, 600}};
  for (const auto& shape : shapes) {
    const int64_t M = shape[0], N = shape[1], K = shape[2];
    auto a = random_halves(static_cast<size_t>(M * K), random);
    auto b = random_halves(static_cast<size_t>(N * K), random);
    std::vector<uint16_t> c(static_cast<size_t>(M * N), 0xffff);
    ASSERT_EQ(run(a, b, c, M, N, K), KILN_OK);
    int wrong = 0;
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < K; ++k) sum += decode(a[i * K + k]) * decode(b[j * K + k]);
        const uint16_t got = c[i * N + j];
        if (!is_rounded(got, sum) && wrong++ < 5) {
          ADD_FAILURE() << M << "x" << N << "x" << K << " C[" << i << "," << j
                        << "] = " << decode(got) << ", naive sum " << sum;
        }
      }
    }
    EXPECT_EQ(wrong, 0) << M << "x" << N << "x" << K;
  }
}

TEST(Fp16GemmReference, IsDeterministic) {
  std::mt19937 random(11);
  const int64_t M = 67, N = 45, K = 1100;
  auto a = random_halves(M * K, random);
  auto b = random_halves(N * K, random);
  std::vector<uint16_t> first(M * N), second(M * N);
  ASSERT_EQ(run(a, b, first, M, N, K), KILN_OK);
  ASSERT_EQ(run(a, b, second, M, N, K), KILN_OK);
  EXPECT_EQ(first, second);
}

uint16_t encode_exact(double x) {
  // Only for values exactly representable in fp16 (used to build inputs).
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if (decode(static_cast<uint16_t>(h)) == x &&
        std::signbit(decode(static_cast<uint16_t>(h))) == std::signbit(x)) {
      return static_cast<uint16_t>(h);
    }
  }
  ADD_FAILURE() << x << " is not an fp16 value";
  return 0;
}

uint16_t gemm_1x1(const std::vector<double>& a_values, const std::vector<double>& b_values) {
  std::vector<uint16_t> a, b, c(1, 0xffff);
  for (double v : a_values) a.push_back(encode_exact(v));
  for (double v : b_values) b.push_back(encode_exact(v));
  EXPECT_EQ(run(a, b, c, 1, 1, static_cast<int64_t>(a.size())), KILN_OK);
  return c[0];
}

TEST(Fp16GemmReference, RoundsTiesToEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: the even one is 1.
  EXPECT_EQ(gemm_1x1({1, 1}, {1, std::ldexp(1.0, -11)}), 0x3c00);
  // 1 + 3*2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  EXPECT_EQ(gemm_1x1({1, 1, 1}, {1, std::ldexp(1.0, -10), std::ldexp(1.0, -11)}), 0x3c02);
}

TEST(Fp16GemmReference, OverflowsToInfinityLikeTheGpu) {
  EXPECT_EQ(gemm_1x1({1, 1}, {65504, 8}), 0x7bff);     // 65512 rounds down to 65504
  EXPECT_EQ(gemm_1x1({1, 1}, {65504, 16}), 0x7c00);    // 65520 is a tie that rounds up to inf
  EXPECT_EQ(gemm_1x1({-1, 1}, {65504, -16}), 0xfc00);  // and to -inf below
}

TEST(Fp16GemmReference, HandlesSubnormals) {
  EXPECT_EQ(gemm_1x1({1}, {std::ldexp(1.0, -24)}), 0x0001);
  EXPECT_EQ(gemm_1x1({0.5}, {std::ldexp(1.0, -24)}), 0x0000);  // tie to even: zero
  EXPECT_EQ(gemm_1x1({0.5}, {std::ldexp(3.0, -24)}), 0x0002);  // 1.5 units: tie to 2
  EXPECT_EQ(gemm_1x1({std::ldexp(1.0, -14)}, {1}), 0x0400);    // smallest normal
}

TEST(Fp16GemmReference, PropagatesNanAndInfinity) {
  std::vector<uint16_t> a = {0x7c00, 0x3c00};  // A = [[inf], [1]]  (2 x 1)
  std::vector<uint16_t> b = {0x3c00, 0x0000};  // B = [[1], [0]]    (2 x 1)
  std::vector<uint16_t> c(4, 0x1234);
  ASSERT_EQ(run(a, b, c, 2, 2, 1), KILN_OK);
  EXPECT_EQ(c[0], 0x7c00);                // inf * 1
  EXPECT_TRUE(std::isnan(decode(c[1])));  // inf * 0
  EXPECT_EQ(c[2], 0x3c00);                // 1 * 1
  EXPECT_EQ(c[3], 0x0000);                // 1 * 0
  a[1] = 0x7e00;                          // NaN row
  ASSERT_EQ(run(a, b, c, 2, 2, 1), KILN_OK);
  EXPECT_TRUE(std::isnan(decode(c[2])));
  EXPECT_TRUE(std::isnan(decode(c[3])));
}

TEST(Fp16GemmReference, WritesZerosWhenKIsZero) {
  std::vector<uint16_t> a, b;
  std::vector<uint16_t> c(6, 0x1234);
  const kiln_tensor tensors[3] = {matrix(a, 2, 0, "A"), matrix(b, 3, 0, "B"), matrix(c, 2, 3, "C")};
  ASSERT_EQ(kiln_reference(tensors, 3, nullptr, 0), KILN_OK);
  EXPECT_EQ(c, std::vector<uint16_t>(6, 0));
}

TEST(Fp16GemmReference, HonoursStridesAndLeavesPaddingAlone) {
  std::mt19937 random(3);
  const int64_t M = 5, N = 6, K = 7;
  auto a = random_halves(M * K, random);
  auto b = random_halves(N * K, random);
  std::vector<uint16_t> dense(M * N);
  ASSERT_EQ(run(a, b, dense, M, N, K), KILN_OK);

  // A stored column-major (strides {1, M}); C rows padded to N + 3 elements.
  std::vector<uint16_t> a_cols(M * K);
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t k = 0; k < K; ++k) a_cols[k * M + i] = a[i * K + k];
  }
  const int64_t ldc = N + 3;
  std::vector<uint16_t> padded(M * ldc, 0xabcd);
  kiln_tensor tensors[3] = {matrix(a_cols, M, K, "A"), matrix(b, N, K, "B"),
                            matrix(padded, M, N, "C")};
  tensors[0].strides[0] = 1;
  tensors[0].strides[1] = M;
  tensors[2].strides[0] = ldc;
  ASSERT_EQ(kiln_reference(tensors, 3, nullptr, 0), KILN_OK);
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      if (j < N) {
        EXPECT_EQ(padded[i * ldc + j], dense[i * N + j]) << i << "," << j;
      } else {
        EXPECT_EQ(padded[i * ldc + j], 0xabcd) << "padding at " << i << "," << j;
      }
    }
  }
}

TEST(Fp16GemmReference, RejectsBadArguments) {
  std::vector<uint16_t> a(6), b(6), c(4);
  auto good = [&] {
    return std::vector<kiln_tensor>{matrix(a, 2, 3, "A"), matrix(b, 2, 3, "B"),
                                    matrix(c, 2, 2, "C")};
  };
  auto t = good();
  ASSERT_EQ(kiln_reference(t.data(), 3, nullptr, 0), KILN_OK);
  EXPECT_EQ(kiln_reference(t.data(), 2, nullptr, 0), KILN_ERR_BAD_ARGUMENT);  // too few tensors
  EXPECT_EQ(kiln_reference(nullptr, 3, nullptr, 0), KILN_ERR_BAD_ARGUMENT);
  kiln_scalar scalar{};
  EXPECT_EQ(kiln_reference(t.data(), 3, &scalar, 1), KILN_ERR_BAD_ARGUMENT);  // no scalars here
  t = good();
  t[1].dtype = KILN_BF16;
  EXPECT_EQ(kiln_reference(t.data(), 3, nullptr, 0), KILN_ERR_BAD_ARGUMENT);
  t = good();
  t[0].rank = 3;
  EXPECT_EQ(kiln_reference(t.data(), 3, nullptr, 0), KILN_ERR_BAD_ARGUMENT);
  t = good();
  t[1].shape[1] = 2;  // B's K differs from A's
  EXPECT_EQ(kiln_reference(t.data(), 3, nullptr, 0), KILN_ERR_BAD_ARGUMENT);
  t = good();
  t[2].shape[1] = 3;  // C is not M x N
  EXPECT_EQ(kiln_reference(t.data(), 3, nullptr, 0), KILN_ERR_BAD_ARGUMENT);
  t = good();
  t[0].data = nullptr;
  EXPECT_EQ(kiln_reference(t.data(), 3, nullptr, 0), KILN_ERR_BAD_ARGUMENT);
}

}  // namespace
