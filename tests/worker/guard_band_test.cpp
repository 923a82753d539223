// guard_band.h: band sizes, seeded contents, and detection of writes next to a tensor.
#include "kiln/worker/guard_band.h"

#include <gtest/gtest.h>

#include <vector>

namespace kiln::worker {
namespace {

TEST(GuardBand, LayoutAlignsDataAndBoundsTheBand) {
  const GuardLayout small = GuardBand::layout_for(10);
  EXPECT_EQ(small.band_bytes, 64 << 10);
  EXPECT_EQ(small.data_offset % 256, 0);
  EXPECT_EQ(small.after_offset(), small.data_offset + 10);  // the band starts right at the end
  EXPECT_EQ(small.total_bytes, small.band_bytes * 2 + 10);
  const GuardLayout large = GuardBand::layout_for(int64_t{1} << 30);
  EXPECT_EQ(large.band_bytes, 4 << 20);
  const GuardLayout mid = GuardBand::layout_for(16 << 20);
  EXPECT_EQ(mid.band_bytes, 1 << 20);
}

TEST(GuardBand, IntactBandsReportNothing) {
  std::vector<unsigned char> band(4096);
  GuardBand::fill_host(band.data(), 4096, 99, 3);
  int64_t first = 0;
  EXPECT_EQ(GuardBand::count_changed_host(band.data(), 4096, 99, 3, &first), 0);
  EXPECT_EQ(first, -1);
}

TEST(GuardBand, FindsTheFirstOverwrittenByte) {
  std::vector<unsigned char> band(4096);
  GuardBand::fill_host(band.data(), 4096, 99, 3);
  band[17] ^= 0xff;
  band[200] ^= 0x01;
  int64_t first = 0;
  EXPECT_EQ(GuardBand::count_changed_host(band.data(), 4096, 99, 3, &first), 2);
  EXPECT_EQ(first, 17);
}

TEST(GuardBand, BandsDifferBySeedAndNumber) {
  std::vector<unsigned char> a(256), b(256), c(256);
  GuardBand::fill_host(a.data(), 256, 1, 0);
  GuardBand::fill_host(b.data(), 256, 2, 0);
  GuardBand::fill_host(c.data(), 256, 1, 1);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  // A band written with zeros (the usual scribble) is nowhere near intact.
  std::vector<unsigned char> zeros(256, 0);
  EXPECT_GT(GuardBand::count_changed_host(zeros.data(), 256, 1, 0, nullptr), 240);
}

TEST(GuardBand, DescribesWhereTheDamageIs) {
  GuardDamage after{3, 0, false};
  EXPECT_NE(GuardBand::describe(after, "C").find("0 bytes after the end of C"), std::string::npos);
  GuardDamage before{1, 8, true};
  EXPECT_NE(GuardBand::describe(before, "C").find("8 bytes before the start of C"),
            std::string::npos);
  EXPECT_NE(GuardBand::describe(GuardDamage{}, "C").find("intact"), std::string::npos);
}

}  // namespace
}  // namespace kiln::worker
