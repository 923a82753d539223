#include "tensor_map_encode.h"

#include <gtest/gtest.h>

namespace kiln::sim::runtime {
namespace {

// A 2-D fp16 tensor, 512 rows of 256 columns, loaded as 64 x 64 boxes with 128B swizzle.
struct Fp16Matrix {
  alignas(64) unsigned char map[128] = {};
  uint64_t dims[2] = {256, 512};
  uint64_t strides[1] = {256 * 2};
  uint32_t box[2] = {64, 64};
  uint32_t element_strides[2] = {1, 1};

  TiledTensorMapArgs args() {
    TiledTensorMapArgs a;
    a.tensor_map = map;
    a.data_type = 6;  // FLOAT16
    a.rank = 2;
    a.global_address = 0x10000000000ull;
    a.global_dim = dims;
    a.global_strides = strides;
    a.box_dim = box;
    a.element_strides = element_strides;
    a.swizzle = 3;  // 128B
    return a;
  }
};

TEST(TensorMapEncode, AcceptsTheCanonicalGemmOperand) {
  Fp16Matrix m;
  auto desc = validate_tiled_tensor_map(m.args());
  ASSERT_TRUE(desc.ok()) << desc.error().message;
  EXPECT_EQ(desc->rank, 2u);
  EXPECT_EQ(desc->element_bytes, 2u);
  EXPECT_EQ(desc->global_dim[1], 512u);
  EXPECT_EQ(desc->global_stride_bytes[0], 2u);
  EXPECT_EQ(desc->global_stride_bytes[1], 512u);
  EXPECT_EQ(desc->box_dim[0], 64u);
  EXPECT_EQ(desc->swizzle, 3u);
}

TEST(TensorMapEncode, RejectsRankZeroAndSix) {
  Fp16Matrix m;
  auto a = m.args();
  a.rank = 0;
  EXPECT_FALSE(validate_tiled_tensor_map(a).ok());
  a.rank = 6;
  auto result = validate_tiled_tensor_map(a);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("tensorRank"), std::string::npos);
}

TEST(TensorMapEncode, RejectsUnalignedGlobalAddress) {
  Fp16Matrix m;
  auto a = m.args();
  a.global_address += 8;
  auto result = validate_tiled_tensor_map(a);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("16-byte aligned"), std::string::npos);
}

TEST(TensorMapEncode, RejectsUnalignedTensorMapObject) {
  Fp16Matrix m;
  auto a = m.args();
  a.tensor_map = m.map + 16;
  EXPECT_FALSE(validate_tiled_tensor_map(a).ok());
}

TEST(TensorMapEncode, RejectsStrideNotMultipleOf16) {
  Fp16Matrix m;
  m.strides[0] = 250 * 2;
  auto result = validate_tiled_tensor_map(m.args());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("globalStrides[0]"), std::string::npos);
}

TEST(TensorMapEncode, RejectsBoxOver256) {
  Fp16Matrix m;
  m.box[1] = 512;
  auto result = validate_tiled_tensor_map(m.args());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("boxDim[1]"), std::string::npos);
}

TEST(TensorMapEncode, RejectsInnerBoxWiderThanTheSwizzleSpan) {
  Fp16Matrix m;
  m.box[0] = 128;  // 256 bytes > 128B swizzle
  auto result = validate_tiled_tensor_map(m.args());
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("swizzle"), std::string::npos);
  auto a = m.args();
  a.swizzle = 0;  // no swizzle: any multiple of 16 bytes is fine
  EXPECT_TRUE(validate_tiled_tensor_map(a).ok());
  m.box[0] = 32;  // 64 bytes
  a = m.args();
  a.swizzle = 1;  // 32B
  EXPECT_FALSE(validate_tiled_tensor_map(a).ok());
  a.swizzle = 2;  // 64B
  EXPECT_TRUE(validate_tiled_tensor_map(a).ok());
}

TEST(TensorMapEncode, RejectsInnerBoxNotMultipleOf16Bytes) {
  Fp16Matrix m;
  m.box[0] = 4;  // 8 bytes
  EXPECT_FALSE(validate_tiled_tensor_map(m.args()).ok());
}

TEST(TensorMapEncode, RejectsElementStrideOver8AndZeroDims) {
  Fp16Matrix m;
  m.element_strides[1] = 9;
  EXPECT_FALSE(validate_tiled_tensor_map(m.args()).ok());
  Fp16Matrix n;
  n.dims[0] = 0;
  EXPECT_FALSE(validate_tiled_tensor_map(n.args()).ok());
}

TEST(TensorMapEncode, RejectsBadEnumsAndNanFillOnIntegers) {
  Fp16Matrix m;
  auto a = m.args();
  a.data_type = 99;
  EXPECT_FALSE(validate_tiled_tensor_map(a).ok());
  a = m.args();
  a.l2_promotion = 4;
  EXPECT_FALSE(validate_tiled_tensor_map(a).ok());
  a = m.args();
  a.data_type = 0;  // UINT8
  a.oob_fill = 1;
  EXPECT_FALSE(validate_tiled_tensor_map(a).ok());
  a = m.args();
  a.swizzle = 4;  // 128B atom 32B: Blackwell
  EXPECT_FALSE(validate_tiled_tensor_map(a).ok());
}

TEST(TensorMapEncode, InterleavedLayoutNeedsRank3) {
  Fp16Matrix m;
  auto a = m.args();
  a.interleave = 1;
  EXPECT_FALSE(validate_tiled_tensor_map(a).ok());
}

TEST(TensorMapEncode, ElementSizesFollowTheDriverTable) {
  EXPECT_EQ(tensor_map_element_bytes(0), 1u);   // UINT8
  EXPECT_EQ(tensor_map_element_bytes(6), 2u);   // FLOAT16
  EXPECT_EQ(tensor_map_element_bytes(8), 8u);   // FLOAT64
  EXPECT_EQ(tensor_map_element_bytes(9), 2u);   // BFLOAT16
  EXPECT_EQ(tensor_map_element_bytes(11), 4u);  // TFLOAT32
  EXPECT_EQ(tensor_map_element_bytes(13), 0u);  // packed
}

}  // namespace
}  // namespace kiln::sim::runtime
