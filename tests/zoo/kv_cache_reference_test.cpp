// Checks the kv_cache_append_rope reference (kb/zoo/references/src/kv_cache_append_rope.cpp):
// rows written at the positions only, K rotated exactly as the rope reference rotates it.
#include <gtest/gtest.h>

#include "reference_test_util.h"

namespace kiln::zoo {
namespace {

using testing::call;
using testing::filled;
using testing::tensor;
using testing::values;
using V = std::vector<double>;

constexpr double kUntouched = 7;  // what the cache rows hold before the call

TEST(KvCacheAppendRopeReference, WritesRotatedKAndVAtThePositionRowsOnly) {
  // T = 2 tokens of one head, D = 4 (pairs (0, 2) and (1, 3)), into a cache of S = 4 rows.
  HostTensor k = tensor("k_new", KILN_BF16, {2, 1, 4}, {1, 2, 3, 4, 1, 0, 0, 1});
  HostTensor v = tensor("v_new", KILN_BF16, {2, 1, 4}, {5, 6, 7, 8, -1, -2, -3, -4});
  HostTensor positions = tensor("positions", KILN_I32, {2}, {2, 0});
  // Position 0: the identity. Position 2: 90 degrees for pair 0, 180 degrees for pair 1.
  HostTensor cos = tensor("cos", KILN_F32, {4, 2}, {1, 1, 9, 9, 0, -1, 9, 9});
  HostTensor sin = tensor("sin", KILN_F32, {4, 2}, {0, 0, 9, 9, 1, 0, 9, 9});
  HostTensor k_cache = filled("k_cache", KILN_BF16, {4, 1, 4}, kUntouched);
  HostTensor v_cache = filled("v_cache", KILN_BF16, {4, 1, 4}, kUntouched);
  ASSERT_EQ(call("kv_cache_append_rope", {&k, &v, &positions, &cos, &sin, &k_cache, &v_cache}),
            KILN_OK);
  // Row 0 = token 1 unrotated; row 2 = token 0 rotated (as RopeReference's token 0); rows 1, 3
  // untouched.
  EXPECT_EQ(values(k_cache), (V{1, 0, 0, 1, 7, 7, 7, 7, -3, -2, 1, -4, 7, 7, 7, 7}));
  EXPECT_EQ(values(v_cache), (V{-1, -2, -3, -4, 7, 7, 7, 7, 5, 6, 7, 8, 7, 7, 7, 7}));
}

TEST(KvCacheAppendRopeReference, RotatesKAsTheRopeReferenceDoes) {
  // Two heads of D = 8 for three tokens, against rope's k_out for the same inputs.
  const int64_t T = 3, HK = 2, D = 8, S = 5;
  HostTensor k = tensor("k_new", KILN_BF16, {T, HK, D});
  HostTensor cos = tensor("cos", KILN_F32, {S, D / 2});
  HostTensor sin = tensor("sin", KILN_F32, {S, D / 2});
  for (int64_t i = 0; i < k.element_count(); ++i)
    encode_element(KILN_BF16, k.bytes.data(), i, 0.125 * static_cast<double>(i % 13) - 0.7);
  for (int64_t i = 0; i < cos.element_count(); ++i) {
    encode_element(KILN_F32, cos.bytes.data(), i, 0.3 - 0.05 * static_cast<double>(i));
    encode_element(KILN_F32, sin.bytes.data(), i, 0.02 * static_cast<double>(i) - 0.1);
  }
  HostTensor positions = tensor("positions", KILN_I32, {T}, {4, 1, 2});
  HostTensor v = tensor("v_new", KILN_BF16, {T, HK, D});
  HostTensor k_cache = filled("k_cache", KILN_BF16, {S, HK, D}, kUntouched);
  HostTensor v_cache = filled("v_cache", KILN_BF16, {S, HK, D}, kUntouched);
  ASSERT_EQ(call("kv_cache_append_rope", {&k, &v, &positions, &cos, &sin, &k_cache, &v_cache}),
            KILN_OK);
  HostTensor q_out = tensor("q_out", KILN_BF16, {T, HK, D});
  HostTensor k_out = tensor("k_out", KILN_BF16, {T, HK, D});
  ASSERT_EQ(call("rope", {&k, &k, &positions, &cos, &sin, &q_out, &k_out}), KILN_OK);
  const int64_t row = HK * D;
  for (int64_t t = 0; t < T; ++t) {
    const auto p = static_cast<int64_t>(positions.at(t));
    for (int64_t e = 0; e < row; ++e)
      EXPECT_EQ(k_cache.at(p * row + e), k_out.at(t * row + e)) << "token " << t << ", " << e;
  }
  for (int64_t e = 0; e < row; ++e) {
    EXPECT_EQ(k_cache.at(0 * row + e), kUntouched);
    EXPECT_EQ(k_cache.at(3 * row + e), kUntouched);
  }
}

TEST(KvCacheAppendRopeReference, RejectsRepeatedOrOutOfRangePositions) {
  HostTensor k = tensor("k_new", KILN_BF16, {2, 1, 4});
  HostTensor v = tensor("v_new", KILN_BF16, {2, 1, 4});
  HostTensor cos = tensor("cos", KILN_F32, {4, 2});
  HostTensor sin = tensor("sin", KILN_F32, {4, 2});
  HostTensor k_cache = tensor("k_cache", KILN_BF16, {4, 1, 4});
  HostTensor v_cache = tensor("v_cache", KILN_BF16, {4, 1, 4});
  for (const V& rows : {V{1, 1}, V{0, 4}, V{-1, 2}}) {
    HostTensor positions = tensor("positions", KILN_I32, {2}, {rows[0], rows[1]});
    EXPECT_EQ(call("kv_cache_append_rope", {&k, &v, &positions, &cos, &sin, &k_cache, &v_cache}),
              KILN_ERR_BAD_ARGUMENT)
        << rows[0] << ", " << rows[1];
  }
  HostTensor positions = tensor("positions", KILN_I32, {2}, {0, 3});
  HostTensor short_cos = tensor("cos", KILN_F32, {3, 2});
  EXPECT_EQ(
      call("kv_cache_append_rope", {&k, &v, &positions, &short_cos, &sin, &k_cache, &v_cache}),
      KILN_ERR_BAD_ARGUMENT);
}

}  // namespace
}  // namespace kiln::zoo
