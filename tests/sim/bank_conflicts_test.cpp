#include "bank_conflicts.h"

#include <gtest/gtest.h>

namespace kiln::sim {
namespace {

TEST(BankConflicts, ConsecutiveWordsAreConflictFree) {
  uint32_t offsets[32];
  for (uint32_t i = 0; i < 32; ++i) offsets[i] = i * 4;
  EXPECT_EQ(bank_conflicts(offsets, 0xffffffffu, 4), 0u);
}

TEST(BankConflicts, SameWordIsABroadcast) {
  uint32_t offsets[32] = {};
  EXPECT_EQ(bank_conflicts(offsets, 0xffffffffu, 4), 0u);
}

TEST(BankConflicts, StrideOf32WordsSerializesTheWarp) {
  uint32_t offsets[32];
  for (uint32_t i = 0; i < 32; ++i) offsets[i] = i * 128;
  EXPECT_EQ(bank_conflicts(offsets, 0xffffffffu, 4), 31u);
}

TEST(BankConflicts, TwoWayConflictFromStrideTwo) {
  uint32_t offsets[32];
  for (uint32_t i = 0; i < 32; ++i) offsets[i] = i * 8;
  EXPECT_EQ(bank_conflicts(offsets, 0xffffffffu, 4), 1u);
}

TEST(BankConflicts, SixteenByteAccessesRunInQuarterWarpPhases) {
  uint32_t offsets[32];
  for (uint32_t i = 0; i < 32; ++i) offsets[i] = i * 16;
  EXPECT_EQ(bank_conflicts(offsets, 0xffffffffu, 16), 0u);
  for (uint32_t i = 0; i < 32; ++i) offsets[i] = i * 32;  // two lanes of a phase share banks
  EXPECT_EQ(bank_conflicts(offsets, 0xffffffffu, 16), 4u);
}

}  // namespace
}  // namespace kiln::sim
