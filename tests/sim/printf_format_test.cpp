#include "printf_format.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace kiln::sim {
namespace {

// A small memory: byte ranges at addresses; a read outside them fails, as a fault would.
class FakeMemory {
 public:
  void put(uint64_t address, const void* bytes, size_t size) {
    const auto* p = static_cast<const uint8_t*>(bytes);
    ranges_[address].assign(p, p + size);
  }
  void put_string(uint64_t address, const std::string& text) {
    put(address, text.c_str(), text.size() + 1);
  }
  PrintfReader reader() {
    return [this](uint64_t address, void* out, uint32_t bytes) {
      auto it = ranges_.upper_bound(address);
      if (it == ranges_.begin()) return false;
      --it;
      uint64_t offset = address - it->first;
      if (offset + bytes > it->second.size()) return false;
      std::memcpy(out, it->second.data() + offset, bytes);
      return true;
    };
  }

 private:
  std::map<uint64_t, std::vector<uint8_t>> ranges_;
};

// Packs arguments as nvcc does for vprintf: each at its natural alignment.
class Packer {
 public:
  template <typename T>
  Packer& add(T value) {
    size_t offset = (bytes_.size() + sizeof(T) - 1) / sizeof(T) * sizeof(T);
    bytes_.resize(offset + sizeof(T));
    std::memcpy(bytes_.data() + offset, &value, sizeof(T));
    return *this;
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

constexpr uint64_t kFormat = 0x1000, kArguments = 0x2000, kString = 0x3000;
constexpr size_t kLimit = 1 << 20;

template <typename... T>
std::string c_format(const char* format, T... values) {
  char text[512];
  std::snprintf(text, sizeof text, format, values...);
  return text;
}

PrintfResult run(FakeMemory& memory, const std::string& format, const Packer& args,
                 size_t limit = kLimit) {
  memory.put_string(kFormat, format);
  memory.put(kArguments, args.bytes().data(), args.bytes().size());
  return format_printf(kFormat, kArguments, memory.reader(), limit);
}

TEST(PrintfFormatTest, FormatsEachConversionAsTheCLibraryDoes) {
  FakeMemory memory;
  memory.put_string(kString, "device string");
  const int i = -42;
  const unsigned u = 0xbeefu;
  const long long ll = -1234567890123LL;
  const double d = 3.14159265358979;
  Packer args;
  args.add(i).add(u).add(ll).add(d).add(kString).add(int{'z'}).add(d).add(u);
  const char* format = "%d|%u|%lld|%.3f|%s|%c|%e|%#X";
  PrintfResult r = run(memory, format, args);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.text,
            c_format("%d|%u|%lld|%.3f|%s|%c|%e|%#X", i, u, ll, d, "device string", 'z', d, u));
  EXPECT_EQ(r.value, 8);  // CUDA's printf returns the number of arguments
}

TEST(PrintfFormatTest, ReadsArgumentsAtTheirNaturalAlignment) {
  FakeMemory memory;
  // int at 0, long long at 8 (not 4), int at 16, double at 24.
  Packer args;
  args.add(7).add(int64_t{1} << 40).add(9).add(0.5);
  ASSERT_EQ(args.bytes().size(), 32u);
  PrintfResult r = run(memory, "%d %ld %i %g", args);
  EXPECT_EQ(r.text, c_format("%d %lld %i %g", 7, 1LL << 40, 9, 0.5));
  EXPECT_EQ(r.value, 4);
}

TEST(PrintfFormatTest, WidthsPrecisionsAndFlags) {
  FakeMemory memory;
  memory.put_string(kString, "abcdef");
  Packer args;
  args.add(5).add(6).add(-17).add(6).add(-17).add(2.71828).add(kString).add(kString).add(255);
  PrintfResult r = run(memory, "[%05d][%*d][%-*d][%.3f][%8.3s][%-8s][%+#o]", args);
  EXPECT_EQ(r.text, c_format("[%05d][%*d][%-*d][%.3f][%8.3s][%-8s][%+#o]", 5, 6, -17, 6, -17,
                             2.71828, "abcdef", "abcdef", 255));
  EXPECT_EQ(r.value, 9);
  // A negative width from '*' left-justifies, as in C.
  Packer negative;
  negative.add(-6).add(42);
  EXPECT_EQ(run(memory, "[%*d]", negative).text, "[42    ]");
}

TEST(PrintfFormatTest, ShortConversionsNarrowThePromotedInt) {
  FakeMemory memory;
  Packer args;
  args.add(70000).add(-70000);
  EXPECT_EQ(run(memory, "%hd %hu", args).text,
            c_format("%hd %hu", static_cast<short>(70000), static_cast<unsigned short>(-70000)));
}

TEST(PrintfFormatTest, PercentSignsAndUnknownConversionsPrintAsWritten) {
  FakeMemory memory;
  Packer args;
  args.add(5);
  PrintfResult r = run(memory, "100%% %k %d%", args);
  EXPECT_EQ(r.text, "100% %k 5%");
  EXPECT_EQ(r.value, 1);
}

TEST(PrintfFormatTest, NullFormatReturnsMinusOneAndPrintsNothing) {
  FakeMemory memory;
  PrintfResult r = format_printf(0, kArguments, memory.reader(), kLimit);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.value, -1);
  EXPECT_EQ(r.text, "");
}

TEST(PrintfFormatTest, NoArgumentBufferLeavesConversionsAsWritten) {
  FakeMemory memory;
  memory.put_string(kFormat, "plain %d\n");
  PrintfResult r = format_printf(kFormat, 0, memory.reader(), kLimit);
  EXPECT_EQ(r.text, "plain %d\n");
  EXPECT_EQ(r.value, 0);
}

TEST(PrintfFormatTest, NullStringPrintsNullAsGlibcDoes) {
  FakeMemory memory;
  Packer args;
  args.add(uint64_t{0}).add(uint64_t{0}).add(uint64_t{0});
  // glibc leaves "(null)" out when the precision is too short for it.
  EXPECT_EQ(run(memory, "<%s><%.3s><%p>", args).text, "<(null)><><(nil)>");
}

// CUDA's device side copies no value for a conversion its own parser does not know (hh, z, j,
// t, L, a '.*' precision, unknown letters), while the host's C library still takes one: the
// values shift, and a conversion left without one prints garbage on a GPU (seen on an H200)
// and as written here. vprintf returns the values the device copied.
TEST(PrintfFormatTest, ConversionsTheDeviceSideSkipsShiftTheValuesAsOnAGpu) {
  FakeMemory memory;
  Packer four;
  four.add(1).add(2).add(3).add(4);
  PrintfResult hh = run(memory, "%hhd|%d|%d|%d", four);
  EXPECT_EQ(hh.text, "1|2|3|%d");
  EXPECT_EQ(hh.value, 3);
  Packer sized;
  sized.add(uint64_t{5}).add(7);
  PrintfResult z = run(memory, "%zu|%d", sized);  // the device copies 4 bytes, for the %d
  EXPECT_EQ(z.text, "5|%d");
  EXPECT_EQ(z.value, 1);
  Packer star;
  star.add(2).add(1.5).add(7);
  PrintfResult precision = run(memory, "%.*f|%d", star);  // the %d copies the 2
  EXPECT_EQ(precision.text, "%.*f|%d");
  EXPECT_EQ(precision.value, 1);
  Packer wide_char;
  wide_char.add(65).add(7).add(3);
  PrintfResult lc = run(memory, "%lc|%d", wide_char);  // %lc copies 8 bytes: 65 and 7
  EXPECT_EQ(lc.text, "A|3");
  EXPECT_EQ(lc.value, 2);
  Packer one;
  one.add(7);
  EXPECT_EQ(run(memory, "%k|%5%|%d", one).text, "%k|%|7");
}

TEST(PrintfFormatTest, ConversionsPastThirtyTwoArgumentsPrintAsWritten) {
  FakeMemory memory;
  Packer args;
  std::string format, expect;
  for (int n = 1; n <= 34; ++n) {
    args.add(n);
    format += "%d ";
    expect += n <= 32 ? std::to_string(n) + " " : "%d ";
  }
  PrintfResult r = run(memory, format, args);
  EXPECT_EQ(r.text, expect);
  EXPECT_EQ(r.value, 32);
}

TEST(PrintfFormatTest, UnreadableMemoryFails) {
  FakeMemory memory;
  Packer args;
  args.add(uint64_t{0xdead0000});  // a %s pointer to nothing
  EXPECT_FALSE(run(memory, "%s", args).ok);
  // The format itself unreadable.
  EXPECT_FALSE(format_printf(0x9999, kArguments, memory.reader(), kLimit).ok);
  // An argument buffer shorter than the format needs.
  Packer one;
  one.add(1);
  EXPECT_FALSE(run(memory, "%d %d", one).ok);
}

TEST(PrintfFormatTest, TextIsCutAtTheLimit) {
  FakeMemory memory;
  Packer args;
  args.add(1).add(2);
  PrintfResult r = run(memory, "%100d and more text %d", args, 16);
  EXPECT_EQ(r.text.size(), 16u);
  EXPECT_EQ(r.text, std::string(16, ' '));
}

}  // namespace
}  // namespace kiln::sim
