// How a register's value varies across the threads of a CTA, as the uniformity analysis tracks
// it inside a block state: one of the public levels, "no value yet", or a bit pattern of %tid.x.
//
// The pattern exists because compilers fold warp and warp-group indices into bit operations:
// (threadIdx.x / 128) * 64 becomes (tid >> 1) & ~63, whose intermediate depends on lane bits
// while the result does not. A pattern says: value bit i is %tid.x bit (i + shift) when that
// tid bit is in `tid_bits`, else 0. With warp-aligned rows, tid bits 0..4 are the lane; a value
// depending on none of them is warp-uniform, and one depending on no tid bit is uniform.
#pragma once

#include <cstdint>

#include "kiln/ptx/uniformity.h"

namespace kiln::ptx::detail {

using ThreadValue = uint32_t;

inline constexpr ThreadValue kUniformValue = 0;
inline constexpr ThreadValue kWarpUniformValue = 1;
inline constexpr ThreadValue kDivergentValue = 2;
inline constexpr ThreadValue kUnsetValue = 3;  // no value reached yet: the lattice's bottom

// %tid.x itself (it is below 1024, so ten bits).
ThreadValue exact_tid_x();
bool is_tid_pattern(ThreadValue v);
ThreadValue from_level(Uniformity level);
// Patterns collapse to the level their lane bits imply; unset reads as uniform.
Uniformity to_level(ThreadValue v);
// Least upper bound: equal values stay; differing patterns collapse first.
ThreadValue join_values(ThreadValue a, ThreadValue b);

// Bit operations on a pattern with a constant; `width` is the result's width in bits.
ThreadValue shift_right(ThreadValue v, uint32_t k);
ThreadValue shift_left(ThreadValue v, uint32_t k, uint32_t width);
ThreadValue and_mask(ThreadValue v, uint64_t mask);
ThreadValue or_mask(ThreadValue v, uint64_t mask);
ThreadValue bit_field(ThreadValue v, uint32_t position, uint32_t length);
ThreadValue truncate(ThreadValue v, uint32_t width);

}  // namespace kiln::ptx::detail
