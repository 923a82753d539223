#include "bank_conflicts.h"

#include <algorithm>
#include <bit>

namespace kiln::sim {

namespace {

// Wavefronts needed by the lanes of one phase: the most distinct 4-byte words in one bank.
uint32_t wavefronts(const uint32_t* offsets, uint32_t mask, uint32_t bytes_per_lane) {
  uint32_t words[128];
  uint32_t n = 0;
  uint32_t per_lane = bytes_per_lane >= 4 ? bytes_per_lane / 4 : 1;
  for (uint32_t m = mask; m != 0; m &= m - 1) {
    uint32_t lane = static_cast<uint32_t>(std::countr_zero(m));
    uint32_t first = offsets[lane] / 4;
    for (uint32_t k = 0; k < per_lane; ++k) words[n++] = first + k;
  }
  if (n == 0) return 0;
  // Fast path: each bank sees one distinct word.
  uint32_t bank_word[32];
  bool conflict = false;
  std::fill(bank_word, bank_word + 32, UINT32_MAX);
  for (uint32_t i = 0; i < n && !conflict; ++i) {
    uint32_t b = words[i] & 31;
    if (bank_word[b] == UINT32_MAX) {
      bank_word[b] = words[i];
    } else if (bank_word[b] != words[i]) {
      conflict = true;
    }
  }
  if (!conflict) return 1;
  std::sort(words, words + n);
  n = static_cast<uint32_t>(std::unique(words, words + n) - words);
  uint32_t count[32] = {};
  uint32_t most = 0;
  for (uint32_t i = 0; i < n; ++i) most = std::max(most, ++count[words[i] & 31]);
  return most;
}

}  // namespace

uint32_t bank_conflicts(const uint32_t* offsets, uint32_t mask, uint32_t bytes_per_lane) {
  uint32_t lanes_per_phase = bytes_per_lane <= 4 ? 32 : bytes_per_lane == 8 ? 16 : 8;
  uint32_t extra = 0;
  for (uint32_t first = 0; first < 32; first += lanes_per_phase) {
    uint32_t phase_mask =
        lanes_per_phase == 32 ? mask : mask & (((1u << lanes_per_phase) - 1) << first);
    uint32_t w = wavefronts(offsets, phase_mask, bytes_per_lane);
    if (w > 1) extra += w - 1;
  }
  return extra;
}

}  // namespace kiln::sim
