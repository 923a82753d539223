// Input checksums: a 64-bit, order-independent digest of a tensor's bytes, taken
// before and after every call; a difference means the candidate wrote into an input.
// The sum over 8-byte words of checksum_term(word, index) (hash_mix.h), the last
// partial word padded with zeros. The GPU reduction computes the same value.
#pragma once

#include <cstdint>

namespace kiln::worker {

class InputChecksum {
 public:
  static uint64_t of_host(const void* data, int64_t bytes);
};

}  // namespace kiln::worker
