// One generic binary floating-point codec (sign, exponent, mantissa, bias) serves f16,
// bf16, E4M3 and E5M2; only NaN and overflow differ between them.
#include "kiln/zoo/numeric.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace kiln::zoo {
namespace {

struct Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool has_infinity;  // IEEE-like: the all-ones exponent is infinity/NaN
};

constexpr Format kHalf{5, 10, 15, true};
constexpr Format kBf16{8, 7, 127, true};
constexpr Format kE4m3{4, 3, 7, false};  // only S.1111.111 is NaN
constexpr Format kE5m2{5, 2, 15, true};

uint32_t all_ones(int bits) { return (1u << bits) - 1u; }

// Largest finite value's exponent field and mantissa.
uint32_t max_exponent_field(const Format& f) {
  return f.has_infinity ? all_ones(f.exponent_bits) - 1 : all_ones(f.exponent_bits);
}
uint32_t max_mantissa_at_max_exponent(const Format& f) {
  return f.has_infinity ? all_ones(f.mantissa_bits) : all_ones(f.mantissa_bits) - 1;
}

uint32_t nan_bits(const Format& f) {
  // Quiet NaN: all-ones exponent, top mantissa bit (E4M3: all-ones mantissa).
  const uint32_t exponent = all_ones(f.exponent_bits) << f.mantissa_bits;
  return f.has_infinity ? exponent | (1u << (f.mantissa_bits - 1))
                        : exponent | all_ones(f.mantissa_bits);
}

double decode(const Format& f, uint32_t bits) {
  const int total = 1 + f.exponent_bits + f.mantissa_bits;
  const bool negative = ((bits >> (total - 1)) & 1u) != 0;
  const uint32_t exponent = (bits >> f.mantissa_bits) & all_ones(f.exponent_bits);
  const uint32_t mantissa = bits & all_ones(f.mantissa_bits);
  double magnitude = 0;
  if (exponent == all_ones(f.exponent_bits) &&
      (f.has_infinity || mantissa == all_ones(f.mantissa_bits))) {
    if (!f.has_infinity || mantissa != 0) return std::numeric_limits<double>::quiet_NaN();
    magnitude = std::numeric_limits<double>::infinity();
  } else if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>((1u << f.mantissa_bits) + mantissa),
                           static_cast<int>(exponent) - f.bias - f.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

// Rounds 0 <= x < 2^52 to an integer, ties to even: adding 2^52 leaves no fraction bits,
// so the addition itself rounds in the default mode (nearest even); exact otherwise.
double round_half_even(double x) { return (x + 0x1p52) - 0x1p52; }

// 2^e for -1022 <= e <= 1023, built from its bits (exact and fast).
double pow2(int e) {
  const uint64_t bits = static_cast<uint64_t>(e + 1023) << 52;
  double out = 0;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

// floor(log2(m)) for a positive finite double; below 2^-1022 (subnormal) any value that
// small will do, since every format here clamps it to its minimum exponent.
int binade(double m) {
  uint64_t bits = 0;
  std::memcpy(&bits, &m, sizeof bits);
  return static_cast<int>((bits >> 52) & 0x7ff) - 1023;
}

// Rounds x to the format, nearest even, with an unbounded exponent range above; a result
// beyond the largest finite value becomes `overflow_bits` (without sign).
uint32_t encode(const Format& f, double x, uint32_t overflow_bits) {
  const int total = 1 + f.exponent_bits + f.mantissa_bits;
  const uint32_t sign = std::signbit(x) ? 1u << (total - 1) : 0u;
  if (std::isnan(x)) return sign | nan_bits(f);
  if (std::isinf(x)) return sign | overflow_bits;
  const double magnitude = std::fabs(x);
  if (magnitude == 0) return sign;
  const int min_normal = 1 - f.bias;
  int exponent = std::max(binade(magnitude), min_normal);  // magnitude < 2^(exponent+1)
  // Significand in units of the quantum 2^(exponent - mantissa_bits): exact scaling.
  double units = round_half_even(magnitude * pow2(f.mantissa_bits - exponent));
  const double implicit = pow2(f.mantissa_bits);
  if (units >= 2 * implicit) {  // rounded up into the next binade
    units /= 2;
    ++exponent;
  }
  uint32_t exponent_field = 0;
  uint32_t mantissa = 0;
  if (units < implicit) {  // subnormal (only at the minimum exponent)
    mantissa = static_cast<uint32_t>(units);
  } else {
    exponent_field = static_cast<uint32_t>(exponent + f.bias);
    mantissa = static_cast<uint32_t>(units - implicit);
  }
  // Compare with the largest finite value without forming an exponent field that might
  // not fit in the format's bits.
  if (exponent + f.bias > static_cast<int>(max_exponent_field(f)) ||
      (exponent_field == max_exponent_field(f) && mantissa > max_mantissa_at_max_exponent(f))) {
    return sign | overflow_bits;
  }
  return sign | (exponent_field << f.mantissa_bits) | mantissa;
}

uint32_t infinity_bits(const Format& f) { return all_ones(f.exponent_bits) << f.mantissa_bits; }
uint32_t max_finite_bits(const Format& f) {
  return (max_exponent_field(f) << f.mantissa_bits) | max_mantissa_at_max_exponent(f);
}

uint32_t float_bits(float x) {
  uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}
float bits_float(uint32_t bits) {
  float x = 0;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

template <typename T>
T load(const void* data, int64_t index) {
  T value{};
  std::memcpy(&value,
              static_cast<const unsigned char*>(data) + index * static_cast<int64_t>(sizeof(T)),
              sizeof(T));
  return value;
}
template <typename T>
void store(void* data, int64_t index, T value) {
  std::memcpy(static_cast<unsigned char*>(data) + index * static_cast<int64_t>(sizeof(T)), &value,
              sizeof(T));
}

// Nearest integer (ties to even), saturated to [lo, hi]; NaN becomes 0.
template <typename T>
T to_integer(double value) {
  if (std::isnan(value)) return 0;
  const auto lo = static_cast<double>(std::numeric_limits<T>::min());
  const auto hi = static_cast<double>(std::numeric_limits<T>::max());
  if (value <= lo) return std::numeric_limits<T>::min();
  if (value >= hi) return std::numeric_limits<T>::max();
  return static_cast<T>(std::nearbyint(value));  // default rounding mode: nearest even
}

}  // namespace

std::optional<kiln_dtype> parse_dtype(std::string_view name) {
  static constexpr struct {
    std::string_view name;
    kiln_dtype dtype;
  } kNames[] = {{"f16", KILN_F16},   {"bf16", KILN_BF16}, {"f32", KILN_F32}, {"f64", KILN_F64},
                {"e4m3", KILN_E4M3}, {"e5m2", KILN_E5M2}, {"i8", KILN_I8},   {"u8", KILN_U8},
                {"i32", KILN_I32},   {"i64", KILN_I64}};
  for (const auto& entry : kNames) {
    if (entry.name == name) return entry.dtype;
  }
  return std::nullopt;
}

std::string_view dtype_name(kiln_dtype dtype) {
  switch (dtype) {
    case KILN_F16:
      return "f16";
    case KILN_BF16:
      return "bf16";
    case KILN_F32:
      return "f32";
    case KILN_F64:
      return "f64";
    case KILN_E4M3:
      return "e4m3";
    case KILN_E5M2:
      return "e5m2";
    case KILN_I8:
      return "i8";
    case KILN_U8:
      return "u8";
    case KILN_I32:
      return "i32";
    case KILN_I64:
      return "i64";
  }
  return "unknown";
}

size_t dtype_size(kiln_dtype dtype) {
  switch (dtype) {
    case KILN_E4M3:
    case KILN_E5M2:
    case KILN_I8:
    case KILN_U8:
      return 1;
    case KILN_F16:
    case KILN_BF16:
      return 2;
    case KILN_F32:
    case KILN_I32:
      return 4;
    case KILN_F64:
    case KILN_I64:
      return 8;
  }
  return 0;
}

bool is_floating(kiln_dtype dtype) {
  switch (dtype) {
    case KILN_F16:
    case KILN_BF16:
    case KILN_F32:
    case KILN_F64:
    case KILN_E4M3:
    case KILN_E5M2:
      return true;
    default:
      return false;
  }
}

float half_to_float(uint16_t bits) {
  // A table, built once: GEMM and attention references widen whole matrices.
  static const std::array<float, 65536> table = [] {
    std::array<float, 65536> values{};
    for (uint32_t b = 0; b < 65536; ++b) values[b] = static_cast<float>(decode(kHalf, b));
    return values;
  }();
  if ((bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0) {
    // NaN: keep sign and payload (shifted into the float's mantissa).
    return bits_float((static_cast<uint32_t>(bits & 0x8000u) << 16) | 0x7f800000u |
                      (static_cast<uint32_t>(bits & 0x3ffu) << 13));
  }
  return table[bits];
}

uint16_t float_to_half(float x) {
  if (std::isnan(x)) {
    const uint32_t bits = float_bits(x);
    uint32_t payload = (bits >> 13) & 0x3ffu;
    if (payload == 0) payload = 0x200u;  // a payload lost to truncation: make it quiet
    return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7c00u | payload);
  }
  return double_to_half(x);
}

uint16_t double_to_half(double x) {
  return static_cast<uint16_t>(encode(kHalf, x, infinity_bits(kHalf)));
}

float bf16_to_float(uint16_t bits) { return bits_float(static_cast<uint32_t>(bits) << 16); }

uint16_t float_to_bf16(float x) {
  if (std::isnan(x)) {
    const uint32_t bits = float_bits(x);
    uint32_t high = bits >> 16;
    if ((high & 0x7fu) == 0) high |= 0x40u;  // payload only in the dropped bits: make it quiet
    return static_cast<uint16_t>(high);
  }
  return double_to_bf16(x);
}

uint16_t double_to_bf16(double x) {
  return static_cast<uint16_t>(encode(kBf16, x, infinity_bits(kBf16)));
}

float e4m3_to_float(uint8_t bits) { return static_cast<float>(decode(kE4m3, bits)); }

uint8_t float_to_e4m3(float x, Fp8Overflow overflow) {
  return double_to_e4m3(static_cast<double>(x), overflow);
}

uint8_t double_to_e4m3(double x, Fp8Overflow overflow) {
  const uint32_t too_big =
      overflow == Fp8Overflow::kSaturate ? max_finite_bits(kE4m3) : nan_bits(kE4m3);
  return static_cast<uint8_t>(encode(kE4m3, x, too_big));
}

double decode_element(kiln_dtype dtype, const void* data, int64_t index) {
  switch (dtype) {
    case KILN_F16:
      return half_to_float(load<uint16_t>(data, index));
    case KILN_BF16:
      return bf16_to_float(load<uint16_t>(data, index));
    case KILN_F32:
      return load<float>(data, index);
    case KILN_F64:
      return load<double>(data, index);
    case KILN_E4M3:
      return decode(kE4m3, load<uint8_t>(data, index));
    case KILN_E5M2:
      return decode(kE5m2, load<uint8_t>(data, index));
    case KILN_I8:
      return load<int8_t>(data, index);
    case KILN_U8:
      return load<uint8_t>(data, index);
    case KILN_I32:
      return load<int32_t>(data, index);
    case KILN_I64:
      return static_cast<double>(load<int64_t>(data, index));
  }
  return std::numeric_limits<double>::quiet_NaN();
}

void encode_element(kiln_dtype dtype, void* data, int64_t index, double value) {
  switch (dtype) {
    case KILN_F16:
      store(data, index, double_to_half(value));
      return;
    case KILN_BF16:
      store(data, index, double_to_bf16(value));
      return;
    case KILN_F32:
      store(data, index, static_cast<float>(value));
      return;  // IEEE cast: nearest even
    case KILN_F64:
      store(data, index, value);
      return;
    case KILN_E4M3:
      store(data, index, double_to_e4m3(value));
      return;
    case KILN_E5M2:
      store(data, index, static_cast<uint8_t>(encode(kE5m2, value, infinity_bits(kE5m2))));
      return;
    case KILN_I8:
      store(data, index, to_integer<int8_t>(value));
      return;
    case KILN_U8:
      store(data, index, to_integer<uint8_t>(value));
      return;
    case KILN_I32:
      store(data, index, to_integer<int32_t>(value));
      return;
    case KILN_I64:
      store(data, index, to_integer<int64_t>(value));
      return;
  }
}

}  // namespace kiln::zoo
