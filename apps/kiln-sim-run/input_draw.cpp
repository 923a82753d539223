#include "input_draw.h"

#include <cstring>

#include "kiln/tasks/hash_mix.h"
#include "kiln/tasks/numeric_codec.h"

namespace kiln::sim::run {
namespace {

// The purpose word of the simulator's input draws ("siminput"), distinct from the GPU
// harness's, so no one mistakes the two streams for each other.
constexpr uint64_t kPurposeSimInput = 0x73696d696e707574ull;

}  // namespace

std::vector<unsigned char> draw_input(const tasks::TensorLayout& tensor, uint64_t seed,
                                      uint64_t tensor_index) {
  if (!tensor.fixed_bytes.empty()) return tensor.fixed_bytes;  // fixed by the dims (group_index)
  const int64_t elements = tensor.elements();
  const int size = tasks::dtype_size(tensor.dtype);
  std::vector<unsigned char> bytes(static_cast<size_t>(elements) * size);
  const uint64_t key = tasks::stream_key(seed, kPurposeSimInput, tensor_index, 0);
  const double low = tensor.distribution.low;
  const double high = tensor.distribution.high;
  const bool integer = !tasks::dtype_is_float(tensor.dtype);
  for (int64_t i = 0; i < elements; ++i) {
    double x = low + (high - low) * tasks::unit_draw(key, static_cast<uint64_t>(i));
    if (integer && x >= high) x = high - 1;
    const uint64_t bits = tasks::encode(tensor.dtype, x);
    std::memcpy(bytes.data() + static_cast<size_t>(i) * size, &bits, size);  // little-endian
  }
  return bytes;
}

}  // namespace kiln::sim::run
