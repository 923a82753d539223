// Differential cases: what each one runs, how its outputs are compared, and the kernels that
// most cases share (one instruction per element; one warp's fragments in, fragments out).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend.h"

namespace kiln::simdiff {

// How an output value is read when two results differ: its lanes' float format.
enum class Format { kBits, kF32, kF64, kF16, kBF16 };

struct Case {
  std::string name;
  // Runs the case on one backend; fills `out` with `out_bits`-wide values. Empty: success.
  std::function<std::string(Backend&, std::vector<uint64_t>* out)> run;
  int out_bits = 32;
  Format format = Format::kBits;  // lanes of out_bits wide values (f16: 16-bit lanes)
  bool exact = true;              // bit-exact; otherwise within max_ulp or abs_tol
  double max_ulp = 0, abs_tol = 0;
  std::vector<std::vector<uint64_t>> inputs;  // shown beside a disagreement (a, b, c)
  // Per value, the bits compared (empty: all): bits PTX leaves undefined are left out.
  std::vector<uint64_t> care;
};

struct CaseResult {
  std::string name;
  bool exact = true;
  size_t values = 0, agree = 0;
  double max_ulp = 0;
  double bound_ulp = 0, bound_abs = 0;
  bool passed = false;
  std::string error;                  // a backend failed: load, launch or fault
  std::vector<std::string> examples;  // first disagreements
};

// A module with entry `eval`: element i loads a[i], b[i], c[i] (in_bits wide, from 8-byte
// slots) into %a %b %c and %d (out_bits) from d[i], runs `body`, stores %d. Scratch registers:
// %r0-%r7 (.b32), %h0-%h7 (.b16), %x0-%x7 (.b64), %f0-%f7 (.f32), %p %q %s (.pred).
Case eval_case(const std::string& name, const std::string& body, int in_bits, int out_bits,
               std::vector<uint64_t> a, std::vector<uint64_t> b = {}, std::vector<uint64_t> c = {});

// A module with entry `frag` for one block of `threads`: `smem` (32-bit words) is copied into
// shared memory `sm` (%sa holds its address), thread t loads %i0..%i<in-1> from in[t*in + k],
// runs `body`, which writes %o0..%o<out-1> (zero before), stored to out[t*out + k].
Case fragment_case(const std::string& name, const std::string& body, uint32_t threads,
                   std::vector<uint32_t> in, uint32_t in_per_thread, uint32_t out_per_thread,
                   std::vector<uint32_t> smem = {});

std::string ptx_header();
CaseResult compare(const Case& c, const std::vector<uint64_t>& gpu,
                   const std::vector<uint64_t>& sim);

// The case lists.
void add_convert_cases(std::vector<Case>& cases);
void add_math_cases(std::vector<Case>& cases);
void add_warp_cases(std::vector<Case>& cases);
void add_tensor_cases(std::vector<Case>& cases);
void add_wgmma_cases(std::vector<Case>& cases);

// Deterministic inputs.
std::vector<uint64_t> f32_edges();  // bit patterns
std::vector<uint64_t> f16_edges();
std::vector<uint64_t> bf16_edges();
uint64_t lcg(uint64_t& state);

}  // namespace kiln::simdiff
