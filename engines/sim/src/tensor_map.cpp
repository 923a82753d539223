#include "kiln/sim/tensor_map.h"

#include <cstring>

namespace kiln::sim {

namespace {

constexpr uint64_t kMagic = 0x50414d524f534e54ull;  // "TNSORMAP" little-endian

// Layout of the 128 bytes: magic (8), then packed fields; everything fits in 128 bytes.
struct Packed {
  uint64_t magic;
  uint64_t global_address;
  uint64_t global_dim[5];
  uint64_t global_stride_bytes[4];  // [1..4]; [0] is the element size
  uint8_t rank;
  uint8_t data_type;
  uint8_t element_bytes;
  uint8_t interleave;
  uint8_t swizzle;
  uint8_t l2_promotion;
  uint8_t oob_fill;
  uint8_t box_dim_minus_1[5];  // 1..256
  uint8_t element_strides[5];  // 1..8
  uint8_t reserved[3];
};
static_assert(sizeof(Packed) <= kTensorMapBytes);

}  // namespace

void encode_tensor_map(const TensorMapDesc& desc, void* out) {
  Packed p{};
  p.magic = kMagic;
  p.global_address = desc.global_address;
  for (int i = 0; i < 5; ++i) p.global_dim[i] = desc.global_dim[i];
  for (int i = 0; i < 4; ++i) p.global_stride_bytes[i] = desc.global_stride_bytes[i + 1];
  p.rank = static_cast<uint8_t>(desc.rank);
  p.data_type = static_cast<uint8_t>(desc.data_type);
  p.element_bytes = static_cast<uint8_t>(desc.element_bytes);
  p.interleave = static_cast<uint8_t>(desc.interleave);
  p.swizzle = static_cast<uint8_t>(desc.swizzle);
  p.l2_promotion = static_cast<uint8_t>(desc.l2_promotion);
  p.oob_fill = static_cast<uint8_t>(desc.oob_fill);
  for (int i = 0; i < 5; ++i) {
    p.box_dim_minus_1[i] = static_cast<uint8_t>(desc.box_dim[i] == 0 ? 0 : desc.box_dim[i] - 1);
    p.element_strides[i] = static_cast<uint8_t>(desc.element_strides[i]);
  }
  std::memset(out, 0, kTensorMapBytes);
  std::memcpy(out, &p, sizeof p);
}

std::optional<TensorMapDesc> decode_tensor_map(const void* in) {
  Packed p;
  std::memcpy(&p, in, sizeof p);
  if (p.magic != kMagic || p.rank < 1 || p.rank > 5) return std::nullopt;
  TensorMapDesc d;
  d.rank = p.rank;
  d.data_type = p.data_type;
  d.element_bytes = p.element_bytes;
  d.global_address = p.global_address;
  d.global_stride_bytes[0] = p.element_bytes;
  for (int i = 0; i < 5; ++i) d.global_dim[i] = p.global_dim[i];
  for (int i = 0; i < 4; ++i) d.global_stride_bytes[i + 1] = p.global_stride_bytes[i];
  for (int i = 0; i < 5; ++i) {
    d.box_dim[i] = i < static_cast<int>(p.rank) ? p.box_dim_minus_1[i] + 1u : 0u;
    d.element_strides[i] = p.element_strides[i];
  }
  d.interleave = p.interleave;
  d.swizzle = p.swizzle;
  d.l2_promotion = p.l2_promotion;
  d.oob_fill = p.oob_fill;
  return d;
}

}  // namespace kiln::sim
