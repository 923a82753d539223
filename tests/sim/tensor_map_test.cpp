#include "kiln/sim/tensor_map.h"

#include <gtest/gtest.h>

#include <cstring>

namespace kiln::sim {
namespace {

TEST(TensorMap, EncodeThenDecodeRoundTrips) {
  TensorMapDesc d;
  d.rank = 2;
  d.data_type = 6;
  d.element_bytes = 2;
  d.global_address = 0x700000001000ull;
  d.global_dim[0] = 1024;
  d.global_dim[1] = 512;
  d.global_stride_bytes[0] = 2;
  d.global_stride_bytes[1] = 2048;
  d.box_dim[0] = 64;
  d.box_dim[1] = 256;
  d.element_strides[0] = 1;
  d.element_strides[1] = 1;
  d.swizzle = 3;
  d.oob_fill = 1;
  alignas(64) unsigned char bytes[kTensorMapBytes];
  encode_tensor_map(d, bytes);
  std::optional<TensorMapDesc> back = decode_tensor_map(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->rank, 2u);
  EXPECT_EQ(back->global_address, d.global_address);
  EXPECT_EQ(back->global_dim[1], 512u);
  EXPECT_EQ(back->global_stride_bytes[0], 2u);
  EXPECT_EQ(back->global_stride_bytes[1], 2048u);
  EXPECT_EQ(back->box_dim[0], 64u);
  EXPECT_EQ(back->box_dim[1], 256u);
  EXPECT_EQ(back->swizzle, 3u);
  EXPECT_EQ(back->oob_fill, 1u);
  EXPECT_EQ(back->data_type, 6u);
}

TEST(TensorMap, DecodeRejectsBytesThatAreNotATensorMap) {
  unsigned char bytes[kTensorMapBytes];
  std::memset(bytes, 0x5a, sizeof bytes);
  EXPECT_FALSE(decode_tensor_map(bytes).has_value());
}

}  // namespace
}  // namespace kiln::sim
