#include "thread_value.h"

#include <gtest/gtest.h>

namespace kiln::ptx::detail {
namespace {

TEST(ThreadValue, KeepsExactTidXPerLane) {
  const ThreadValue tid = exact_tid_x();
  EXPECT_TRUE(is_tid_pattern(tid));
  EXPECT_EQ(to_level(tid), Uniformity::Divergent);
}

TEST(ThreadValue, DropsLaneBitsByShiftingAndMasking) {
  const ThreadValue tid = exact_tid_x();
  EXPECT_EQ(shift_right(tid, 5), kWarpUniformValue);                // tid / 32
  EXPECT_EQ(to_level(shift_right(tid, 4)), Uniformity::Divergent);  // tid / 16
  EXPECT_EQ(and_mask(tid, ~uint64_t{31}), kWarpUniformValue);       // tid & -32
  EXPECT_EQ(to_level(and_mask(tid, 31)), Uniformity::Divergent);    // the lane
  EXPECT_EQ(and_mask(tid, 0), kUniformValue);                       // always zero
  // (tid >> 1) & ~63: the compiler's form of (tid / 128) * 64.
  const ThreadValue half = shift_right(tid, 1);
  EXPECT_TRUE(is_tid_pattern(half));
  EXPECT_EQ(and_mask(half, 0x7FFFFFC0), kWarpUniformValue);
  // Bits 7..8 of tid.
  EXPECT_EQ(bit_field(tid, 7, 2), kWarpUniformValue);
  EXPECT_TRUE(is_tid_pattern(bit_field(tid, 3, 4)));
  // Setting the lane bits to one makes them constant.
  EXPECT_EQ(or_mask(tid, 31), kWarpUniformValue);
}

TEST(ThreadValue, TracksShiftsLeftAndTruncation) {
  const ThreadValue tid = exact_tid_x();
  // (tid << 2) & ~127: tid bits 5 and up.
  EXPECT_EQ(and_mask(shift_left(tid, 2, 32), ~uint64_t{127}), kWarpUniformValue);
  EXPECT_TRUE(is_tid_pattern(and_mask(shift_left(tid, 2, 32), ~uint64_t{63})));
  EXPECT_EQ(shift_left(tid, 40, 32), kUniformValue);  // shifted out entirely
  EXPECT_EQ(truncate(tid, 64), tid);
  // tid << 30 in 64 bits, cut to 32: only tid bits 0 and 1 survive; cut to 30: none.
  EXPECT_TRUE(is_tid_pattern(truncate(shift_left(tid, 30, 64), 32)));
  EXPECT_EQ(truncate(shift_left(tid, 30, 64), 30), kUniformValue);
}

TEST(ThreadValue, JoinsAsALattice) {
  const ThreadValue tid = exact_tid_x();
  EXPECT_EQ(join_values(tid, tid), tid);
  EXPECT_EQ(join_values(kUnsetValue, tid), tid);
  EXPECT_EQ(join_values(tid, kUnsetValue), tid);
  EXPECT_EQ(join_values(tid, kUniformValue), kDivergentValue);
  EXPECT_EQ(join_values(tid, shift_right(tid, 1)), kDivergentValue);
  EXPECT_EQ(join_values(kUniformValue, kWarpUniformValue), kWarpUniformValue);
  EXPECT_EQ(to_level(kUnsetValue), Uniformity::Uniform);
  EXPECT_EQ(from_level(Uniformity::WarpUniform), kWarpUniformValue);
}

TEST(ThreadValue, LeavesLevelsAloneInBitOperations) {
  EXPECT_EQ(shift_right(kDivergentValue, 5), kDivergentValue);
  EXPECT_EQ(and_mask(kWarpUniformValue, 0), kWarpUniformValue);
}

}  // namespace
}  // namespace kiln::ptx::detail
