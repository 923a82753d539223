// The counter-based hashes behind every value the harness makes up: input draws,
// guard-band bytes and input checksums. Pure functions of (seed, counter), so the GPU
// kernels and the host-side checks and tests produce the same numbers.
#pragma once

#include <cstdint>

#include "kiln/tasks/host_device.h"

namespace kiln::tasks {

// SplitMix64's finalizer: a bijection on 64-bit words with full avalanche.
KILN_HD inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A key for one stream of draws: (seed, purpose, tensor, draw number).
KILN_HD inline uint64_t stream_key(uint64_t seed, uint64_t purpose, uint64_t tensor,
                                   uint64_t draw) {
  return mix64(seed ^ mix64(purpose ^ mix64(tensor ^ mix64(draw))));
}

// Uniform in [0, 1) with 53 random bits, for element `index` of stream `key`.
KILN_HD inline double unit_draw(uint64_t key, uint64_t index) {
  return static_cast<double>(mix64(key ^ mix64(index)) >> 11) * (1.0 / 9007199254740992.0);
}

// One term of an input checksum: the sum over words of checksum_term(word, i) mod 2^64
// is independent of summation order, so a parallel reduction gives the host's answer.
KILN_HD inline uint64_t checksum_term(uint64_t word, uint64_t index) {
  return mix64(word ^ mix64(index + 0x632be59bd9b4e019ull));
}

// Byte `offset` of the guard band numbered `band` under `seed`.
KILN_HD inline uint8_t guard_byte(uint64_t seed, uint64_t band, uint64_t offset) {
  const uint64_t word = mix64(seed ^ mix64(band * 0x100000001b3ull ^ (offset >> 3)));
  return static_cast<uint8_t>(word >> (8 * (offset & 7)));
}

}  // namespace kiln::tasks
