// Building blocks for instruction handlers: typed reads and writes of register slots, and
// handler templates that apply a per-lane function to every active lane.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "exec.h"

namespace kiln::sim {

// Registers hold 64 bits per lane; a narrower value sits in the low bits, zero-extended.
template <typename T>
inline T get(uint64_t bits) {
  if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<float>(static_cast<uint32_t>(bits));
  } else if constexpr (std::is_same_v<T, double>) {
    return std::bit_cast<double>(bits);
  } else {
    return static_cast<T>(bits);
  }
}

template <typename T>
inline uint64_t put(T value) {
  if constexpr (std::is_same_v<T, float>) {
    return std::bit_cast<uint32_t>(value);
  } else if constexpr (std::is_same_v<T, double>) {
    return std::bit_cast<uint64_t>(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? 1 : 0;
  } else {
    return static_cast<std::make_unsigned_t<T>>(value);
  }
}

// d = F(a) / F(a, b) / F(a, b, c); F is a stateless callable type. The result type R may differ
// from the source type T (mul.wide, setp-free compares, popc).
template <typename T, typename R, auto F>
void unary_op(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  for_lanes(mask, [&](uint32_t l) { d[l] = put<R>(F(get<T>(a[l]))); });
}

template <typename T, typename R, auto F>
void binary_op(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  const uint64_t* b = x.reg(o[2]);
  for_lanes(mask, [&](uint32_t l) { d[l] = put<R>(F(get<T>(a[l]), get<T>(b[l]))); });
}

template <typename T, typename R, auto F>
void ternary_op(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  const uint64_t* b = x.reg(o[2]);
  const uint64_t* c = x.reg(o[3]);
  for_lanes(mask, [&](uint32_t l) { d[l] = put<R>(F(get<T>(a[l]), get<T>(b[l]), get<T>(c[l]))); });
}

// Same, with the instruction passed along (for mode bits and immediates).
template <typename T, typename R, auto F>
void binary_op_i(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  const uint64_t* b = x.reg(o[2]);
  for_lanes(mask, [&](uint32_t l) { d[l] = put<R>(F(in, get<T>(a[l]), get<T>(b[l]))); });
}

template <typename T, typename R, auto F>
void ternary_op_i(Exec& x, const Inst& in, uint32_t mask) {
  const uint32_t* o = x.ops(in);
  uint64_t* d = x.reg(o[0]);
  const uint64_t* a = x.reg(o[1]);
  const uint64_t* b = x.reg(o[2]);
  const uint64_t* c = x.reg(o[3]);
  for_lanes(mask,
            [&](uint32_t l) { d[l] = put<R>(F(in, get<T>(a[l]), get<T>(b[l]), get<T>(c[l]))); });
}

}  // namespace kiln::sim
