#include "thread_value.h"

namespace kiln::ptx::detail {
namespace {

constexpr ThreadValue kPatternTag = 0x80000000u;
constexpr int kShiftBias = 1024;
constexpr uint32_t kLaneBits = 0x1F;

int shift_of(ThreadValue v) { return static_cast<int>((v >> 16) & 0x7FF) - kShiftBias; }
uint32_t bits_of(ThreadValue v) { return v & 0xFFFF; }

// Keeps the tid bits whose value bit (j - shift) satisfies `keep`, then normalizes.
template <typename Keep>
ThreadValue make(int shift, uint32_t tid_bits, Keep&& keep) {
  uint32_t bits = 0;
  for (int j = 0; j < 16; ++j) {
    if (((tid_bits >> j) & 1) == 0) continue;
    const int value_bit = j - shift;
    if (value_bit >= 0 && value_bit < 64 && keep(value_bit)) bits |= 1u << j;
  }
  if (bits == 0) return kUniformValue;
  if ((bits & kLaneBits) == 0) return kWarpUniformValue;
  if (shift < -kShiftBias + 1 || shift > kShiftBias - 1) return kDivergentValue;
  return kPatternTag | (static_cast<uint32_t>(shift + kShiftBias) << 16) | bits;
}

auto any_bit = [](int) { return true; };

}  // namespace

ThreadValue exact_tid_x() { return make(0, 0x3FF, any_bit); }

bool is_tid_pattern(ThreadValue v) { return (v & kPatternTag) != 0; }

ThreadValue from_level(Uniformity level) { return static_cast<ThreadValue>(level); }

Uniformity to_level(ThreadValue v) {
  if (is_tid_pattern(v)) return Uniformity::Divergent;  // normalized patterns hold lane bits
  if (v == kUnsetValue) return Uniformity::Uniform;
  return static_cast<Uniformity>(v);
}

ThreadValue join_values(ThreadValue a, ThreadValue b) {
  if (a == b || b == kUnsetValue) return a;
  if (a == kUnsetValue) return b;
  const Uniformity la = to_level(a), lb = to_level(b);
  return from_level(la > lb ? la : lb);
}

ThreadValue shift_right(ThreadValue v, uint32_t k) {
  if (!is_tid_pattern(v)) return v;
  return make(shift_of(v) + static_cast<int>(k & 127), bits_of(v), any_bit);
}

ThreadValue shift_left(ThreadValue v, uint32_t k, uint32_t width) {
  if (!is_tid_pattern(v)) return v;
  return make(shift_of(v) - static_cast<int>(k & 127), bits_of(v),
              [&](int bit) { return bit < static_cast<int>(width); });
}

ThreadValue and_mask(ThreadValue v, uint64_t mask) {
  if (!is_tid_pattern(v)) return v;
  return make(shift_of(v), bits_of(v), [&](int bit) { return ((mask >> bit) & 1) != 0; });
}

ThreadValue or_mask(ThreadValue v, uint64_t mask) {
  if (!is_tid_pattern(v)) return v;
  // Bits forced to one no longer depend on the thread.
  return make(shift_of(v), bits_of(v), [&](int bit) { return ((mask >> bit) & 1) == 0; });
}

ThreadValue bit_field(ThreadValue v, uint32_t position, uint32_t length) {
  if (!is_tid_pattern(v)) return v;
  return make(shift_of(v) + static_cast<int>(position & 127), bits_of(v),
              [&](int bit) { return bit < static_cast<int>(length); });
}

ThreadValue truncate(ThreadValue v, uint32_t width) {
  if (!is_tid_pattern(v)) return v;
  return make(shift_of(v), bits_of(v), [&](int bit) { return bit < static_cast<int>(width); });
}

}  // namespace kiln::ptx::detail
