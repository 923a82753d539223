// The simulator's CUtensorMap: the 128 opaque bytes that cuTensorMapEncodeTiled fills. The
// simulated runtime (engines/sim/runtime) validates the arguments as the driver does and calls
// encode_tensor_map; the simulator core decodes the bytes when cp.async.bulk.tensor names the
// map (by its .param or global address). Field meanings follow the CUDA driver API.
#pragma once

#include <cstdint>
#include <optional>

namespace kiln::sim {

inline constexpr uint32_t kTensorMapBytes = 128;

struct TensorMapDesc {
  uint32_t rank = 0;                     // 1..5
  uint32_t data_type = 0;                // CUtensorMapDataType value
  uint32_t element_bytes = 0;            // size of one element of data_type
  uint64_t global_address = 0;           // simulated device address, 16-byte aligned
  uint64_t global_dim[5] = {};           // elements per dimension, innermost first
  uint64_t global_stride_bytes[5] = {};  // [0] is the element size; [1..rank-1] as given
  uint32_t box_dim[5] = {};              // elements per dimension of the shared-memory box
  uint32_t element_strides[5] = {};      // traversal strides, 1 = dense
  uint32_t interleave = 0;               // CUtensorMapInterleave value
  uint32_t swizzle = 0;                  // CUtensorMapSwizzle value: 0 none, 1 32B, 2 64B, 3 128B
  uint32_t l2_promotion = 0;             // CUtensorMapL2promotion value
  uint32_t oob_fill = 0;                 // CUtensorMapFloatOOBfill value: 0 zeros, 1 NaN (fma-safe)
};

// Writes `desc` into 128 bytes (a magic word first, so decode can tell a real map from junk).
void encode_tensor_map(const TensorMapDesc& desc, void* out);
// Reads back what encode_tensor_map wrote; nullopt when the bytes are not a kiln tensor map.
std::optional<TensorMapDesc> decode_tensor_map(const void* in);

}  // namespace kiln::sim
