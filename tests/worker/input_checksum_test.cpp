// input_checksum.h: any change to an input's bytes changes its checksum.
#include "kiln/worker/input_checksum.h"

#include <gtest/gtest.h>

#include <vector>

namespace kiln::worker {
namespace {

TEST(InputChecksum, SameBytesSameSum) {
  std::vector<unsigned char> a(1000, 7), b(1000, 7);
  EXPECT_EQ(InputChecksum::of_host(a.data(), 1000), InputChecksum::of_host(b.data(), 1000));
}

TEST(InputChecksum, EverySingleByteChangeIsSeen) {
  std::vector<unsigned char> data(67);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 31);
  const uint64_t sum = InputChecksum::of_host(data.data(), 67);
  for (size_t i = 0; i < data.size(); ++i) {
    data[i] ^= 0x10;
    EXPECT_NE(InputChecksum::of_host(data.data(), 67), sum) << i;  // the odd tail too
    data[i] ^= 0x10;
  }
}

TEST(InputChecksum, SwappedWordsChangeTheSum) {
  // Position enters every term, so moving data around is a change too.
  std::vector<uint64_t> words = {1, 2, 3, 4};
  const uint64_t sum = InputChecksum::of_host(words.data(), 32);
  std::swap(words[0], words[3]);
  EXPECT_NE(InputChecksum::of_host(words.data(), 32), sum);
}

TEST(InputChecksum, ZeroingIsSeen) {
  std::vector<uint16_t> data(4096, 0x3c00);
  const uint64_t sum = InputChecksum::of_host(data.data(), 8192);
  std::fill(data.begin(), data.begin() + 64, 0);
  EXPECT_NE(InputChecksum::of_host(data.data(), 8192), sum);
}

}  // namespace
}  // namespace kiln::worker
