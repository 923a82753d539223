// Number formats of the kiln ABI on the host: dtype names and sizes, exact decoding of
// f16, bf16 and OCP FP8 E4M3 bits, and encoding with round-to-nearest-even.
//
// Every decoder is exact (each value of these formats is a float). Every encoder rounds
// once, to nearest with ties to even, directly from its argument: double_to_bf16 does not
// round through float first, so it never double-rounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "kiln/abi.h"

namespace kiln::zoo {

// "f16", "bf16", "f32", "f64", "e4m3", "e5m2", "i8", "u8", "i32", "i64" (as in task.json).
std::optional<kiln_dtype> parse_dtype(std::string_view name);
std::string_view dtype_name(kiln_dtype dtype);
// Bytes per element; 0 for a value outside the enum.
size_t dtype_size(kiln_dtype dtype);
bool is_floating(kiln_dtype dtype);

// IEEE binary16. Overflow rounds to infinity, as __float2half_rn does; NaN payloads are
// kept where they fit (a NaN never becomes infinity).
float half_to_float(uint16_t bits);
uint16_t float_to_half(float x);
uint16_t double_to_half(double x);

// bfloat16 (the top half of a binary32). Overflow rounds to infinity.
float bf16_to_float(uint16_t bits);
uint16_t float_to_bf16(float x);
uint16_t double_to_bf16(double x);

// OCP 8-bit E4M3 (OFP8 spec v1.0): bias 7, no infinities, S.1111.111 is NaN, largest
// finite 448 (S.1111.110), subnormals m * 2^-9.
float e4m3_to_float(uint8_t bits);
// What a value too large for E4M3 becomes: +-448 (CUDA's __NV_SATFINITE) or NaN
// (__NV_NOSAT). Infinity saturates or becomes NaN the same way; NaN stays NaN.
enum class Fp8Overflow { kSaturate, kNaN };
uint8_t float_to_e4m3(float x, Fp8Overflow overflow = Fp8Overflow::kSaturate);
uint8_t double_to_e4m3(double x, Fp8Overflow overflow = Fp8Overflow::kSaturate);

// The element at `index` (in elements) of `data`, widened exactly to double (i64 beyond
// 2^53 rounds). Returns NaN for a dtype outside the enum.
double decode_element(kiln_dtype dtype, const void* data, int64_t index);
// Stores `value` rounded to `dtype` (floating: nearest even; E4M3 saturating; integers:
// nearest, ties to even, saturating at the type's range, NaN as 0).
void encode_element(kiln_dtype dtype, void* data, int64_t index, double value);

}  // namespace kiln::zoo
