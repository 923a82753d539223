// Device printf as CUDA implements it, in its two halves. vprintf(format, arguments) receives a
// generic pointer to the NUL-terminated format string and one to the buffer nvcc packed the
// arguments into (each at its natural alignment: int-sized and smaller integers as 4 bytes,
// long long and pointers as 8, float promoted to double).
//
// 1. On the device, vprintf scans the format with a small parser of its own and copies one
//    value per conversion it knows into the printf FIFO: flags "-+ #0", a width of digits or
//    '*' (one int), a precision of digits, sizes h (4 bytes), l and ll (8 bytes), conversions
//    c d i o u x X (4 or 8 bytes), e E f F g G a A (8), s (a pointer; the string is copied)
//    and p (8). Anything else after a '%' copies nothing: hh, z, j, t and L sizes, a '.*'
//    precision and unknown conversions. At most 32 values are copied; vprintf returns how
//    many (-1 for a null format).
// 2. On the host, the CUDA runtime formats the whole format with the C library, which takes
//    the copied values in order by its own parse. Where the two parses disagree, later
//    conversions take the wrong values, and a conversion left without one prints garbage on
//    a GPU (checked on an H200). The simulator prints such a conversion as written instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace kiln::sim {

// Copies `bytes` at generic address `address` into `out`; false when they cannot be read (the
// reader has then raised a fault).
using PrintfReader = std::function<bool(uint64_t address, void* out, uint32_t bytes)>;

// CUDA's printf copies at most this many arguments after the format.
inline constexpr uint32_t kPrintfMaxArguments = 32;

struct PrintfResult {
  bool ok = true;     // false: memory could not be read (a fault was raised); print nothing
  int32_t value = 0;  // what vprintf returns: the values copied, or -1 for a null format
  std::string text;
};

// Formats one printf call. `max_text` bounds the text (and every string read for %s); what
// is longer is cut there.
PrintfResult format_printf(uint64_t format, uint64_t arguments, const PrintfReader& read,
                           size_t max_text);

}  // namespace kiln::sim
