#include "zoo_case.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "kiln/zoo/numeric.h"
#include "kiln/zoo/parallel_for.h"

namespace kiln::zoo {
namespace {

constexpr int64_t kChunk = 1 << 16;  // elements per independently seeded chunk

// SplitMix64: small, fast, and good enough to draw test inputs.
uint64_t mix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

double unit(uint64_t& state) {  // uniform in [0, 1)
  return static_cast<double>(mix(state) >> 11) * 0x1.0p-53;
}

// Fills every element of `t` with draw(state) in parallel chunks, each seeded from
// (seed, chunk), so the result does not depend on the thread count.
template <typename Draw>
void fill(HostTensor& t, uint64_t seed, const Draw& draw) {
  const int64_t count = t.element_count();
  parallel_for((count + kChunk - 1) / kChunk, 1, [&](int64_t begin, int64_t end) {
    for (int64_t chunk = begin; chunk < end; ++chunk) {
      uint64_t state = seed ^ (static_cast<uint64_t>(chunk) * 0xd1b54a32d192ed03ull);
      mix(state);
      const int64_t last = std::min(count, (chunk + 1) * kChunk);
      for (int64_t i = chunk * kChunk; i < last; ++i) {
        encode_element(t.dtype, t.bytes.data(), i, draw(state));
      }
    }
  });
}

// The E4M3 values within [low, high], as bit patterns (NaN excluded).
std::vector<uint8_t> e4m3_values_in(double low, double high) {
  std::vector<uint8_t> out;
  for (int b = 0; b < 256; ++b) {
    const double v = e4m3_to_float(static_cast<uint8_t>(b));
    if (!std::isnan(v) && v >= low && v <= high) out.push_back(static_cast<uint8_t>(b));
  }
  return out;
}

// Per row of indices[T, K]: K distinct experts in [0, E), skewed towards low ids (e = E·u²)
// so experts receive very different token counts, as real routers do.
void fill_expert_choices(HostTensor& t, int64_t experts, uint64_t seed) {
  const int64_t rows = t.shape.at(0), k = t.shape.at(1);
  uint64_t state = seed;
  std::vector<int64_t> chosen;
  for (int64_t r = 0; r < rows; ++r) {
    chosen.clear();
    while (static_cast<int64_t>(chosen.size()) < k) {
      const double u = unit(state);
      const auto e =
          std::min(experts - 1, static_cast<int64_t>(u * u * static_cast<double>(experts)));
      if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) chosen.push_back(e);
    }
    for (int64_t j = 0; j < k; ++j) {
      encode_element(t.dtype, t.bytes.data(), r * k + j,
                     static_cast<double>(chosen[static_cast<size_t>(j)]));
    }
  }
}

// A uniformly random permutation of 0 .. count-1 (Fisher-Yates).
void fill_permutation(HostTensor& t, uint64_t seed) {
  const int64_t count = t.element_count();
  std::vector<int64_t> order(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) order[static_cast<size_t>(i)] = i;
  uint64_t state = seed;
  for (int64_t i = count - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(mix(state) % static_cast<uint64_t>(i + 1));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  for (int64_t i = 0; i < count; ++i)
    encode_element(t.dtype, t.bytes.data(), i, static_cast<double>(order[static_cast<size_t>(i)]));
}

// count distinct integers uniform in [0, extent), in random order (a partial Fisher-Yates
// shuffle of 0 .. extent-1 that stores only the swapped slots); count <= extent.
void fill_distinct_indices(HostTensor& t, int64_t extent, uint64_t seed) {
  std::unordered_map<int64_t, int64_t> swapped;
  const auto slot = [&](int64_t i) {
    const auto it = swapped.find(i);
    return it != swapped.end() ? it->second : i;
  };
  uint64_t state = seed;
  for (int64_t i = 0; i < t.element_count(); ++i) {
    const int64_t j = i + static_cast<int64_t>(mix(state) % static_cast<uint64_t>(extent - i));
    const int64_t chosen = slot(j);
    swapped[j] = slot(i);
    encode_element(t.dtype, t.bytes.data(), i, static_cast<double>(chosen));
  }
}

}  // namespace

std::vector<kiln_tensor> ZooCase::host_descriptors() {
  std::vector<kiln_tensor> out;
  for (auto& t : inputs) out.push_back(t.descriptor());
  for (auto& t : outputs) out.push_back(t.descriptor());
  return out;
}

uint64_t case_seed(const std::string& id, size_t shape_index, uint64_t base_seed) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (const unsigned char c : id) hash = (hash ^ c) * 0x100000001b3ull;
  hash ^= (static_cast<uint64_t>(shape_index) + 1) * 0x9e3779b97f4a7c15ull;
  uint64_t state = hash ^ base_seed;
  return mix(state);
}

std::vector<int32_t> random_group_offsets(int64_t M, int64_t G, int64_t multiple_of,
                                          uint64_t seed) {
  const int64_t units = M / multiple_of;
  uint64_t state = seed;
  std::vector<int64_t> cuts;
  for (int64_t g = 1; g < G; ++g)
    cuts.push_back(static_cast<int64_t>(mix(state) % static_cast<uint64_t>(units + 1)));
  std::sort(cuts.begin(), cuts.end());
  std::vector<int64_t> sizes;
  int64_t previous = 0;
  for (const int64_t cut : cuts) {
    sizes.push_back(cut - previous);
    previous = cut;
  }
  if (G > 0) sizes.push_back(units - previous);
  if (G >= 2) {  // at least one empty group: a kernel must skip it without reading B[g]
    const auto empty = static_cast<size_t>(mix(state) % static_cast<uint64_t>(G));
    const size_t neighbour = (empty + 1) % static_cast<size_t>(G);
    sizes[neighbour] += sizes[empty];
    sizes[empty] = 0;
  }
  std::vector<int32_t> offsets{0};
  int64_t start = 0;
  for (const int64_t size : sizes) {
    start += size * multiple_of;
    offsets.push_back(static_cast<int32_t>(start));
  }
  return offsets;
}

std::vector<int32_t> random_masked_counts(int64_t G, int64_t M, uint64_t seed) {
  uint64_t state = seed;
  std::vector<int32_t> counts;
  for (int64_t g = 0; g < G; ++g)
    counts.push_back(static_cast<int32_t>(mix(state) % static_cast<uint64_t>(M + 1)));
  if (G >= 2) {  // a kernel must skip an empty group and stop at a full one's end
    const auto empty = static_cast<size_t>(mix(state) % static_cast<uint64_t>(G));
    const auto full =
        (empty + 1 + mix(state) % static_cast<uint64_t>(G - 1)) % static_cast<size_t>(G);
    counts[empty] = 0;
    counts[full] = static_cast<int32_t>(M);
  }
  return counts;
}

CaseResult make_zoo_case(const ZooMeta& meta, size_t shape_index, uint64_t seed) {
  CaseResult result;
  if (shape_index >= meta.shapes.size()) {
    result.error = "no test shape " + std::to_string(shape_index);
    return result;
  }
  ZooCase& c = result.test_case;
  c.dims = meta.shapes[shape_index];
  const ShapeResult shapes = evaluate_shapes(meta, c.dims);
  if (!shapes.error.empty()) {
    result.error = "shape " + format_dims(c.dims) + ": " + shapes.error;
    return result;
  }
  size_t next_shape = 0;
  for (const TensorDecl& decl : meta.inputs) {
    c.inputs.push_back(make_host_tensor(decl.name, decl.dtype, shapes.shapes[next_shape++]));
  }
  for (const TensorDecl& decl : meta.outputs) {
    c.outputs.push_back(make_host_tensor(decl.name, decl.dtype, shapes.shapes[next_shape++]));
  }
  const double low = meta.range_low, high = meta.range_high;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    HostTensor& t = c.inputs[i];
    const uint64_t tensor_seed = seed ^ ((i + 1) * 0x2545f4914f6cdd1dull);
    if (meta.op == "gemm_tn_fp8" && (t.name == "scale_a" || t.name == "scale_b")) {
      encode_element(t.dtype, t.bytes.data(), 0, t.name == "scale_a" ? 0.5 : 0.25);
    } else if (meta.op == "grouped_gemm_tn" && t.name == "offsets") {
      const int64_t M = c.dims.count("M") ? c.dims.at("M") : 0;
      const int64_t G = t.element_count() - 1;
      if (meta.group_sizes_multiple_of < 1 || M % meta.group_sizes_multiple_of != 0) {
        result.error = "M = " + std::to_string(M) +
                       " is not a multiple of test.group_sizes_multiple_of (" +
                       std::to_string(meta.group_sizes_multiple_of) + ")";
        return result;
      }
      const auto offsets = random_group_offsets(M, G, meta.group_sizes_multiple_of, tensor_seed);
      for (size_t g = 0; g < offsets.size(); ++g) {
        encode_element(t.dtype, t.bytes.data(), static_cast<int64_t>(g), offsets[g]);
      }
    } else if (meta.op == "grouped_gemm_masked" && t.name == "masked_m") {
      const int64_t M = c.dims.count("M") ? c.dims.at("M") : 0;
      const auto counts = random_masked_counts(t.element_count(), M, tensor_seed);
      for (size_t g = 0; g < counts.size(); ++g) {
        encode_element(t.dtype, t.bytes.data(), static_cast<int64_t>(g), counts[g]);
      }
    } else if ((meta.op == "cross_entropy" && t.name == "targets") ||
               (meta.op == "rope" && t.name == "positions")) {
      // Indices into another dim (V classes, P cached positions): uniform over it.
      const char* dim = meta.op == "rope" ? "P" : "V";
      const int64_t extent = c.dims.count(dim) ? c.dims.at(dim) : 0;
      if (extent < 1) {
        result.error = std::string("dim ") + dim + " must be at least 1 to draw " + t.name;
        return result;
      }
      fill(t, tensor_seed, [&](uint64_t& state) {
        return static_cast<double>(mix(state) % static_cast<uint64_t>(extent));
      });
    } else if (meta.op == "kv_cache_append_rope" && t.name == "positions") {
      // Cache rows to write: distinct, so no two tokens write one row.
      const int64_t S = c.dims.count("S") ? c.dims.at("S") : 0;
      if (S < t.element_count()) {
        result.error = "dim S must be at least T to draw T distinct positions";
        return result;
      }
      fill_distinct_indices(t, S, tensor_seed);
    } else if (meta.op == "moe_permute" && t.name == "indices") {
      const int64_t E = c.dims.count("E") ? c.dims.at("E") : 0;
      if (E < t.shape.at(1)) {
        result.error = "dim E must be at least K to draw K distinct experts per token";
        return result;
      }
      fill_expert_choices(t, E, tensor_seed);
    } else if (meta.op == "moe_unpermute" && t.name == "dest_rows") {
      fill_permutation(t, tensor_seed);
    } else if (t.dtype == KILN_E4M3) {
      const std::vector<uint8_t> values = e4m3_values_in(low, high);
      if (values.empty()) {
        result.error = "no E4M3 value lies in test.input_range";
        return result;
      }
      fill(t, tensor_seed, [&](uint64_t& state) {
        return static_cast<double>(e4m3_to_float(values[mix(state) % values.size()]));
      });
    } else if (!is_floating(t.dtype)) {
      const double lo = std::ceil(low), hi = std::max(lo, std::floor(high));
      const auto span = static_cast<uint64_t>(hi - lo) + 1;
      fill(t, tensor_seed,
           [&](uint64_t& state) { return lo + static_cast<double>(mix(state) % span); });
    } else if (meta.op == "topk" || meta.op == "moe_gating_topk") {
      fill(t, tensor_seed, [&](uint64_t& state) {
        return low + (high - low) * std::floor(unit(state) * 256) / 256;
      });
    } else {
      fill(t, tensor_seed, [&](uint64_t& state) { return low + (high - low) * unit(state); });
    }
  }
  for (const ScalarDecl& s : meta.scalars) {
    kiln_scalar scalar{};
    scalar.name = s.name.c_str();
    scalar.dtype = s.dtype;
    if (s.dtype == KILN_I64) {
      scalar.value.i = s.i;
    } else {
      scalar.value.f = s.f;
    }
    c.scalars.push_back(scalar);
  }
  return result;
}

}  // namespace kiln::zoo
