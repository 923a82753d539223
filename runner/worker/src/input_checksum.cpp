#include "kiln/worker/input_checksum.h"

#include <cstring>

#include "kiln/tasks/hash_mix.h"

namespace kiln::worker {

uint64_t InputChecksum::of_host(const void* data, int64_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t sum = 0;
  const int64_t words = (bytes + 7) / 8;
  for (int64_t i = 0; i < words; ++i) {
    uint64_t word = 0;
    const int64_t take = bytes - i * 8 < 8 ? bytes - i * 8 : 8;
    std::memcpy(&word, p + i * 8, static_cast<size_t>(take));
    sum += tasks::checksum_term(word, static_cast<uint64_t>(i));
  }
  return sum;
}

}  // namespace kiln::worker
