// cuTensorMapEncodeTiled for the simulator: the argument checks the driver documents (rank,
// 16-byte address and stride alignment, box sizes, swizzle span, element strides, enums),
// then the TensorMapDesc that encode_tensor_map (kiln/sim/tensor_map.h) writes into the
// 128-byte CUtensorMap. Pure: no runtime state.
#pragma once

#include <cstdint>

#include "kiln/base/result.h"
#include "kiln/sim/tensor_map.h"

namespace kiln::sim::runtime {

struct TiledTensorMapArgs {
  const void* tensor_map = nullptr;  // where the 128 bytes go (must be 64-byte aligned)
  uint32_t data_type = 0;            // CUtensorMapDataType
  uint32_t rank = 0;
  uint64_t global_address = 0;
  const uint64_t* global_dim = nullptr;       // rank entries
  const uint64_t* global_strides = nullptr;   // rank - 1 entries, bytes
  const uint32_t* box_dim = nullptr;          // rank entries
  const uint32_t* element_strides = nullptr;  // rank entries
  uint32_t interleave = 0;
  uint32_t swizzle = 0;
  uint32_t l2_promotion = 0;
  uint32_t oob_fill = 0;
};

// Bytes per element of a CUtensorMapDataType; 0 for the packed sub-byte types and unknowns.
uint32_t tensor_map_element_bytes(uint32_t data_type);

// The descriptor, or an error naming the argument, the rule and how to fix it (the driver
// returns CUDA_ERROR_INVALID_VALUE for all of these).
Result<TensorMapDesc> validate_tiled_tensor_map(const TiledTensorMapArgs& args);

}  // namespace kiln::sim::runtime
