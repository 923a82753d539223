#include "fat_binary.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace kiln::sim::runtime {
namespace {

std::vector<unsigned char> read_fixture(const std::string& name) {
  std::ifstream in(std::string(KILN_SIMRT_FIXTURES) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string ptx_of(const std::string& fixture) {
  auto bytes = read_fixture(fixture);
  auto entries = parse_fat_binary(bytes.data(), bytes.size());
  EXPECT_TRUE(entries.ok()) << entries.error().message;
  if (!entries.ok()) return "";
  auto ptx = extract_ptx(*entries);
  EXPECT_TRUE(ptx.ok()) << ptx.error().message;
  return ptx.ok() ? *ptx : "";
}

TEST(FatBinary, ExtractsUncompressedPtxFromNvccOutput) {
  const std::string ptx = ptx_of("tiny_ptx.fatbin");
  EXPECT_NE(ptx.find(".entry _Z16kiln_tiny_kernelPfi"), std::string::npos);
  EXPECT_NE(ptx.find(".target sm_90a"), std::string::npos);
  EXPECT_EQ(ptx.find('\0'), std::string::npos);
}

TEST(FatBinary, DecompressesZstdPtxAsNvcc13WritesByDefault) {
  auto bytes = read_fixture("tiny_ptx_zstd.fatbin");
  auto entries = parse_fat_binary(bytes.data(), bytes.size());
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  ASSERT_EQ(entries->size(), 1u);
  EXPECT_TRUE((*entries)[0].compressed);
  EXPECT_EQ(ptx_of("tiny_ptx_zstd.fatbin"), ptx_of("tiny_ptx.fatbin"));
}

TEST(FatBinary, PicksTheHighestArchPtxBesideSass) {
  auto bytes = read_fixture("tiny_sass_ptx.fatbin");
  auto entries = parse_fat_binary(bytes.data(), bytes.size());
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  int ptx_entries = 0, elf_entries = 0;
  for (const auto& entry : *entries) {
    if (entry.kind == static_cast<uint16_t>(FatbinEntryKind::kPtx)) ++ptx_entries;
    if (entry.kind == static_cast<uint16_t>(FatbinEntryKind::kElf)) ++elf_entries;
  }
  EXPECT_EQ(ptx_entries, 2);
  EXPECT_EQ(elf_entries, 1);
  EXPECT_NE(ptx_of("tiny_sass_ptx.fatbin").find(".target sm_90a"), std::string::npos);
}

TEST(FatBinary, SassOnlyFatBinaryAsksForAPtxBuild) {
  auto bytes = read_fixture("tiny_sass.fatbin");
  auto entries = parse_fat_binary(bytes.data(), bytes.size());
  ASSERT_TRUE(entries.ok()) << entries.error().message;
  auto ptx = extract_ptx(*entries);
  ASSERT_FALSE(ptx.ok());
  EXPECT_NE(ptx.error().message.find("code=compute_90a"), std::string::npos);
}

TEST(FatBinary, RejectsWrongMagic) {
  auto bytes = read_fixture("tiny_ptx.fatbin");
  bytes[0] ^= 0xff;
  auto entries = parse_fat_binary(bytes.data(), bytes.size());
  ASSERT_FALSE(entries.ok());
  EXPECT_NE(entries.error().message.find("magic"), std::string::npos);
}

TEST(FatBinary, RejectsTruncatedInput) {
  auto bytes = read_fixture("tiny_ptx.fatbin");
  for (size_t size : {size_t{0}, size_t{8}, size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
    auto entries = parse_fat_binary(bytes.data(), size);
    EXPECT_FALSE(entries.ok()) << "size " << size;
  }
}

TEST(FatBinary, RejectsEntryThatOverrunsTheFatBinary) {
  auto bytes = read_fixture("tiny_ptx.fatbin");
  const uint64_t huge = uint64_t{1} << 40;
  std::memcpy(bytes.data() + 16 + 8, &huge, sizeof huge);  // the first entry's payload size
  auto entries = parse_fat_binary(bytes.data(), bytes.size());
  ASSERT_FALSE(entries.ok());
  EXPECT_NE(entries.error().message.find("runs past"), std::string::npos);
}

TEST(FatBinary, RejectsCorruptCompressedPayload) {
  auto bytes = read_fixture("tiny_ptx_zstd.fatbin");
  auto entries = parse_fat_binary(bytes.data(), bytes.size());
  ASSERT_TRUE(entries.ok());
  auto entry = (*entries)[0];
  std::vector<unsigned char> garbage(entry.payload, entry.payload + entry.payload_bytes);
  for (size_t i = 8; i < garbage.size(); ++i) garbage[i] = static_cast<unsigned char>(i * 37);
  entry.payload = garbage.data();
  auto ptx = extract_ptx({entry});
  ASSERT_FALSE(ptx.ok());
  EXPECT_NE(ptx.error().message.find("--no-compress"), std::string::npos);
}

TEST(FatBinary, WrapperWithWrongMagicIsRejected) {
  const uint32_t wrapper[6] = {0x12345678u, 1, 0, 0, 0, 0};
  auto entries = parse_fatbin_wrapper(wrapper);
  ASSERT_FALSE(entries.ok());
  EXPECT_NE(entries.error().message.find("nvcc"), std::string::npos);
}

TEST(FatBinary, RelocatableDeviceCodeWrapperIsRefusedWithAdvice) {
  const uint32_t wrapper[6] = {kFatbinWrapperMagic, 2, 0, 0, 0, 0};
  auto entries = parse_fatbin_wrapper(wrapper);
  ASSERT_FALSE(entries.ok());
  EXPECT_NE(entries.error().message.find("-rdc"), std::string::npos);
}

}  // namespace
}  // namespace kiln::sim::runtime
