#include "tensor_map_encode.h"

#include <cstdio>
#include <string>

#include "kiln/base/hex.h"

namespace kiln::sim::runtime {
namespace {

// CUtensorMapDataType values (cuda.h).
constexpr uint32_t kFloat16 = 6, kTfloat32Ftz = 12, kPacked16U6 = 15;
constexpr uint32_t kInterleaveNone = 0, kInterleave32B = 2;
constexpr uint32_t kSwizzleNone = 0, kSwizzle128B = 3, kSwizzle128BAtom64B = 6;
constexpr uint32_t kMaxL2Promotion = 3, kMaxOobFill = 1;
constexpr uint32_t kMaxRank = 5, kMaxBox = 256, kMaxElementStride = 8;
constexpr uint64_t kMaxGlobalDim = uint64_t{1} << 32;
constexpr uint64_t kMaxGlobalStride = uint64_t{1} << 40;

std::string at(const char* array, uint32_t i) {
  return std::string(array) + "[" + std::to_string(i) + "]";
}

Error invalid(std::string message) {
  return make_error("cuTensorMapEncodeTiled: " + std::move(message) +
                    " (the driver returns CUDA_ERROR_INVALID_VALUE)");
}

bool is_float(uint32_t data_type) { return data_type >= kFloat16 && data_type <= kTfloat32Ftz; }

uint32_t swizzle_span(uint32_t swizzle) { return swizzle == kSwizzleNone ? 0 : 16u << swizzle; }

}  // namespace

uint32_t tensor_map_element_bytes(uint32_t data_type) {
  static constexpr uint32_t kBytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  return data_type < sizeof kBytes / sizeof kBytes[0] ? kBytes[data_type] : 0;
}

Result<TensorMapDesc> validate_tiled_tensor_map(const TiledTensorMapArgs& args) {
  if (args.tensor_map == nullptr) return invalid("tensorMap is null");
  if (reinterpret_cast<uintptr_t>(args.tensor_map) % 64 != 0)
    return invalid(
        "tensorMap must be 64-byte aligned (declare it alignas(64), as CUtensorMap "
        "is)");
  if (args.data_type > kPacked16U6)
    return invalid("tensorDataType " + std::to_string(args.data_type) +
                   " is not a CUtensorMapDataType");
  const uint32_t element = tensor_map_element_bytes(args.data_type);
  if (element == 0)
    return invalid("tensorDataType " + std::to_string(args.data_type) +
                   " (a packed sub-byte type, sm_100 and later) is not supported by the "
                   "sm_90a simulator");
  if (args.interleave > kInterleave32B)
    return invalid("interleave " + std::to_string(args.interleave) +
                   " is not a CUtensorMapInterleave");
  const bool interleaved = args.interleave != kInterleaveNone;
  if (args.rank == 0 || args.rank > kMaxRank)
    return invalid("tensorRank " + std::to_string(args.rank) + " must be 1 to 5");
  if (interleaved && args.rank < 3)
    return invalid("tensorRank must be at least 3 with an interleaved layout");
  const uint64_t address_alignment = args.interleave == kInterleave32B ? 32 : 16;
  if (args.global_address % address_alignment != 0)
    return invalid("globalAddress " + hex(args.global_address) + " must be " +
                   std::to_string(address_alignment) + "-byte aligned");
  if (args.global_dim == nullptr || args.box_dim == nullptr || args.element_strides == nullptr ||
      (args.rank > 1 && args.global_strides == nullptr))
    return invalid(
        "globalDim, globalStrides (for rank > 1), boxDim and elementStrides must "
        "not be null");
  if (args.swizzle > kSwizzle128BAtom64B)
    return invalid("swizzle " + std::to_string(args.swizzle) + " is not a CUtensorMapSwizzle");
  if (args.swizzle > kSwizzle128B)
    return invalid("swizzle " + std::to_string(args.swizzle) +
                   " (a 128B atom mode, sm_100 and later) is not supported by the sm_90a "
                   "simulator");
  if (args.l2_promotion > kMaxL2Promotion)
    return invalid("l2Promotion " + std::to_string(args.l2_promotion) +
                   " is not a CUtensorMapL2promotion");
  if (args.oob_fill > kMaxOobFill)
    return invalid("oobFill " + std::to_string(args.oob_fill) +
                   " is not a CUtensorMapFloatOOBfill");
  if (args.oob_fill != 0 && !is_float(args.data_type))
    return invalid("oobFill NAN_REQUEST_ZERO_FMA needs a floating-point tensorDataType");

  TensorMapDesc desc;
  desc.rank = args.rank;
  desc.data_type = args.data_type;
  desc.element_bytes = element;
  desc.global_address = args.global_address;
  desc.interleave = args.interleave;
  desc.swizzle = args.swizzle;
  desc.l2_promotion = args.l2_promotion;
  desc.oob_fill = args.oob_fill;
  desc.global_stride_bytes[0] = element;
  const uint64_t stride_alignment = args.interleave == kInterleave32B ? 32 : 16;
  for (uint32_t i = 0; i < args.rank; ++i) {
    const uint64_t dim = args.global_dim[i];
    if (dim == 0 || dim > kMaxGlobalDim)
      return invalid(at("globalDim", i) + " = " + std::to_string(dim) +
                     " must be 1 to 2^32 elements");
    desc.global_dim[i] = dim;
    const uint32_t box = args.box_dim[i];
    if (box == 0 || box > kMaxBox)
      return invalid(at("boxDim", i) + " = " + std::to_string(box) +
                     " must be 1 to 256 elements; load a larger tile as several boxes");
    desc.box_dim[i] = box;
    const uint32_t step = args.element_strides[i];
    if (step == 0 || step > kMaxElementStride)
      return invalid(at("elementStrides", i) + " = " + std::to_string(step) +
                     " must be 1 to 8 (1 for a dense box)");
    desc.element_strides[i] = step;
    if (i + 1 < args.rank) {
      const uint64_t stride = args.global_strides[i];
      if (stride % stride_alignment != 0 || stride >= kMaxGlobalStride)
        return invalid(at("globalStrides", i) + " = " + std::to_string(stride) +
                       " bytes must be a multiple of " + std::to_string(stride_alignment) +
                       " and below 2^40 (pad rows to a multiple of 16 bytes; strides are in "
                       "bytes, not elements)");
      desc.global_stride_bytes[i + 1] = stride;
    }
  }
  const uint64_t inner_bytes = uint64_t{args.box_dim[0]} * element;
  if (!interleaved && inner_bytes % 16 != 0)
    return invalid("the box's inner dimension is " + std::to_string(inner_bytes) +
                   " bytes (boxDim[0] * element size); it must be a multiple of 16 bytes");
  if (!interleaved && args.swizzle != kSwizzleNone && inner_bytes > swizzle_span(args.swizzle))
    return invalid("the box's inner dimension is " + std::to_string(inner_bytes) +
                   " bytes but swizzle mode " + std::to_string(args.swizzle) + " spans only " +
                   std::to_string(swizzle_span(args.swizzle)) +
                   " bytes; make boxDim[0] * element size at most the swizzle span");
  if (args.interleave == kInterleave32B && args.swizzle != 1)
    return invalid("interleave 32B requires swizzle 32B");
  return desc;
}

}  // namespace kiln::sim::runtime
