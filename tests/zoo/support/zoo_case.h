// One test case of a zoo entry: the inputs for one of its test shapes, drawn from a seed,
// plus output buffers and the scalars, ready to be described to kiln_launch or to the
// CPU reference.
//
// Inputs are uniform in test.input_range, rounded to their dtype, except:
//   gemm_tn_fp8: A and B are random E4M3 values within the range (every exponent
//     appears), scale_a = 0.5 and scale_b = 0.25;
//   grouped_gemm_tn: offsets are a random partition of M into G groups, some empty, each
//     a multiple of test.group_sizes_multiple_of (8 when absent);
//   grouped_gemm_masked: masked_m are uniform counts in [0, M], one group empty and
//     another full (when G >= 2);
//   cross_entropy targets and rope positions: uniform integers in [0, V) and [0, P);
//   topk and moe_gating_topk: values on a grid of 256 steps across the range, so rows hold ties;
//   moe_permute indices: K distinct experts in [0, E) per token, skewed towards low ids;
//   moe_unpermute dest_rows: a random permutation of [0, T*K);
//   kv_cache_append_rope positions: T distinct integers in [0, S), in random order;
//   integer inputs: uniform integers within the range.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "host_tensor.h"
#include "zoo_meta.h"

namespace kiln::zoo {

struct ZooCase {
  Dims dims;
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> outputs;   // zero-filled
  std::vector<kiln_scalar> scalars;  // names point into the ZooMeta

  // Descriptors of inputs then outputs over these host buffers.
  std::vector<kiln_tensor> host_descriptors();
};

struct CaseResult {
  ZooCase test_case;
  std::string error;  // empty on success
};

// Builds the case for meta.shapes[shape_index]. The same meta, index and seed give the
// same inputs on every machine and with any number of threads.
CaseResult make_zoo_case(const ZooMeta& meta, size_t shape_index, uint64_t seed);

// A seed from the entry id and the shape index (FNV-1a), so each shape has its own.
uint64_t case_seed(const std::string& id, size_t shape_index, uint64_t base_seed);

// The G+1 group starts partitioning M rows (exposed for its test).
std::vector<int32_t> random_group_offsets(int64_t M, int64_t G, int64_t multiple_of, uint64_t seed);

// The G valid-row counts of a masked grouped GEMM with M rows per group (exposed for its
// test): uniform in [0, M], then (G >= 2) one random group set to 0 and another to M, so
// every draw holds an empty group, a full one and, usually, partial ones.
std::vector<int32_t> random_masked_counts(int64_t G, int64_t M, uint64_t seed);

}  // namespace kiln::zoo
