#include "kiln/tasks/tensor_layout.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "kiln/group_layout.h"
#include "kiln/tasks/numeric_codec.h"

namespace kiln::tasks {

namespace {

struct DtypeName {
  const char* name;
  kiln_dtype dtype;
};

constexpr DtypeName kDtypes[] = {{"f16", KILN_F16}, {"bf16", KILN_BF16}, {"f32", KILN_F32},
                                 {"f64", KILN_F64}, {"e4m3", KILN_E4M3}, {"e5m2", KILN_E5M2},
                                 {"i8", KILN_I8},   {"u8", KILN_U8},     {"i32", KILN_I32},
                                 {"i64", KILN_I64}};

// An f64 scalar's value is either a plain number (as task.json wrote it) or an
// integer expression over the dims.
Result<double> scalar_as_double(const std::string& text,
                                const std::map<std::string, int64_t>& dims) {
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (end != text.c_str() && *end == '\0') return number;
  auto value = evaluate(text, dims);
  if (!value) return value.error();
  return static_cast<double>(*value);
}

// An expression of a group_index distribution at the workload's dims.
Result<int64_t> group_argument(const std::string& field, const std::string& expression,
                               const std::map<std::string, int64_t>& dims) {
  auto value = evaluate(expression, dims);
  if (!value) return make_error("group_index " + field + ": " + value.error().message);
  return *value;
}

// The G+1 row offsets of a group_offsets input: kiln/group_layout.h's group starts over the
// total rows, each group's padding folded into it, so groups are contiguous and sizes are
// multiples of align (the last one takes the rows left over).
Result<std::vector<int64_t>> group_offset_values(const Distribution& distribution,
                                                 const std::map<std::string, int64_t>& dims,
                                                 int64_t entries) {
  auto groups = group_argument("groups", distribution.groups, dims);
  if (!groups) return groups.error();
  auto rows = group_argument("rows", distribution.rows_per_group, dims);
  if (!rows) return rows.error();
  auto align = group_argument("align", distribution.align, dims);
  if (!align) return align.error();
  auto seed = group_argument("seed", distribution.seed, dims);
  if (!seed) return seed.error();
  if (*groups < 1 || *groups + 1 != entries)
    return make_error("group_offsets needs groups + 1 entries, and groups is " +
                      std::to_string(*groups) + " for " + std::to_string(entries) + " entries");
  std::vector<int64_t> begin(static_cast<size_t>(*groups));
  std::vector<int64_t> count(static_cast<size_t>(*groups));
  const int64_t per_group = std::max<int64_t>(1, *rows / *groups);
  if (kiln_group_layout(*groups, per_group, *align, 0.5, static_cast<uint64_t>(*seed), *rows,
                        begin.data(), count.data()) != 0)
    return make_error("group_offsets arguments out of range (groups " + std::to_string(*groups) +
                      ", rows " + std::to_string(*rows) + ", align " + std::to_string(*align) +
                      "); each must be at least 1");
  begin.push_back(*rows);
  return begin;
}

// A small deterministic generator (splitmix64) for the index draws fixed by the dims.
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int64_t below(int64_t bound) {
    return static_cast<int64_t>(next() % static_cast<uint64_t>(bound));
  }
};

// Shuffles values in place (Fisher-Yates).
void shuffle(std::vector<int64_t>::iterator first, std::vector<int64_t>::iterator last,
             SplitMix& random) {
  for (auto n = last - first; n > 1; --n) std::iter_swap(first + (n - 1), first + random.below(n));
}

// distinct_indices: per row of the last dimension, `row` distinct integers uniform in
// [0, extent) in random order (Floyd's sampling, then a shuffle), seeded by the shape.
Result<std::vector<int64_t>> distinct_index_values(const TensorLayout& tensor,
                                                   const std::map<std::string, int64_t>& dims) {
  auto extent = evaluate(tensor.distribution.extent, dims);
  if (!extent) return make_error("distinct_indices extent: " + extent.error().message);
  const int64_t row = tensor.shape.empty() ? 1 : tensor.shape.back();
  if (row > *extent)
    return make_error("distinct_indices needs extent >= " + std::to_string(row) +
                      " (the last dimension) to draw that many distinct values per row, and "
                      "extent '" +
                      tensor.distribution.extent + "' is " + std::to_string(*extent));
  SplitMix random{static_cast<uint64_t>(*extent) * 0x100000001B3ull +
                  static_cast<uint64_t>(tensor.elements())};
  std::vector<int64_t> values;
  values.reserve(static_cast<size_t>(tensor.elements()));
  std::vector<int64_t> chosen;
  for (int64_t r = 0; r < tensor.elements() / row; ++r) {
    chosen.clear();
    for (int64_t j = *extent - row; j < *extent; ++j) {
      const int64_t t = random.below(j + 1);
      chosen.push_back(std::find(chosen.begin(), chosen.end(), t) == chosen.end() ? t : j);
    }
    shuffle(chosen.begin(), chosen.end(), random);
    values.insert(values.end(), chosen.begin(), chosen.end());
  }
  return values;
}

// permutation: 0 .. elements-1 in an order seeded by the shape.
std::vector<int64_t> permutation_values(const TensorLayout& tensor) {
  std::vector<int64_t> values(static_cast<size_t>(tensor.elements()));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int64_t>(i);
  SplitMix random{static_cast<uint64_t>(tensor.elements()) * 0x9E3779B1ull};
  shuffle(values.begin(), values.end(), random);
  return values;
}

// The values of an input whose values follow from the dims, one per element.
Result<std::vector<int64_t>> fixed_values(const TensorLayout& tensor,
                                          const std::map<std::string, int64_t>& dims) {
  if (tensor.distribution.kind == "group_offsets")
    return group_offset_values(tensor.distribution, dims, tensor.elements());
  if (tensor.distribution.kind == "distinct_indices") return distinct_index_values(tensor, dims);
  if (tensor.distribution.kind == "permutation") return permutation_values(tensor);
  return group_index_values(tensor.distribution, dims, tensor.elements());
}

// The fixed bytes of an input whose values follow from the dims.
Result<std::vector<unsigned char>> fixed_input(const TensorLayout& tensor,
                                               const std::map<std::string, int64_t>& dims) {
  const int size = dtype_size(tensor.dtype);
  std::vector<unsigned char> bytes(static_cast<size_t>(tensor.bytes()));
  if (tensor.distribution.kind == "constant") {
    const uint64_t bits = encode(tensor.dtype, tensor.distribution.low);
    for (int64_t i = 0; i < tensor.elements(); ++i)
      std::memcpy(bytes.data() + i * size, &bits, static_cast<size_t>(size));
    return bytes;
  }
  auto values = fixed_values(tensor, dims);
  if (!values) return values.error();
  for (size_t i = 0; i < values->size(); ++i) {
    const uint64_t bits = encode(tensor.dtype, static_cast<double>((*values)[i]));
    std::memcpy(bytes.data() + i * static_cast<size_t>(size), &bits, static_cast<size_t>(size));
  }
  return bytes;
}

}  // namespace

Result<std::vector<int64_t>> group_index_values(const Distribution& distribution,
                                                const std::map<std::string, int64_t>& dims,
                                                int64_t rows) {
  auto groups = group_argument("groups", distribution.groups, dims);
  if (!groups) return groups.error();
  auto per_group = group_argument("rows_per_group", distribution.rows_per_group, dims);
  if (!per_group) return per_group.error();
  auto align = group_argument("align", distribution.align, dims);
  if (!align) return align.error();
  auto seed = group_argument("seed", distribution.seed, dims);
  if (!seed) return seed.error();
  if (*groups < 1 || *groups > (int64_t{1} << 20)) {
    return make_error("group_index groups is " + std::to_string(*groups) +
                      "; it must be between 1 and 2^20");
  }
  std::vector<int64_t> begin(static_cast<size_t>(*groups));
  std::vector<int64_t> count(static_cast<size_t>(*groups));
  if (kiln_group_layout(*groups, *per_group, *align, distribution.spread,
                        static_cast<uint64_t>(*seed), rows, begin.data(), count.data()) != 0) {
    return make_error("group_index arguments out of range (groups " + std::to_string(*groups) +
                      ", rows_per_group " + std::to_string(*per_group) + ", align " +
                      std::to_string(*align) + "); each must be at least 1");
  }
  std::vector<int64_t> out(static_cast<size_t>(rows));
  kiln_group_index_rows(*groups, begin.data(), count.data(), rows, -1, out.data());
  return out;
}

Result<kiln_dtype> parse_dtype(const std::string& name) {
  for (const auto& entry : kDtypes) {
    if (name == entry.name) return entry.dtype;
  }
  return make_error("unknown dtype \"" + name +
                    "\"; use one of f16 bf16 f32 f64 e4m3 e5m2 i8 u8 i32 i64");
}

const char* dtype_name(kiln_dtype dtype) {
  for (const auto& entry : kDtypes) {
    if (entry.dtype == dtype) return entry.name;
  }
  return "?";
}

int64_t TensorLayout::elements() const {
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  return count;
}

int64_t TensorLayout::bytes() const { return elements() * dtype_size(dtype); }

int64_t TensorLayout::checked_elements() const {
  if (ignored_rows.empty() || shape.empty()) return elements();
  int64_t rows = 0;
  for (uint8_t ignored : ignored_rows) rows += ignored == kRowIgnored ? 0 : 1;
  return rows * (elements() / shape[0]);
}

std::vector<int64_t> TensorLayout::index_of(int64_t flat) const {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

std::vector<kiln_scalar> WorkloadLayout::abi_scalars() const {
  std::vector<kiln_scalar> out;
  for (const auto& scalar : scalars) {
    kiln_scalar s{};
    s.name = scalar.name.c_str();
    s.dtype = scalar.dtype;
    if (scalar.dtype == KILN_I64) {
      s.value.i = scalar.i;
    } else {
      s.value.f = scalar.f;
    }
    out.push_back(s);
  }
  return out;
}

std::vector<kiln_tensor> WorkloadLayout::abi_tensors(const std::vector<void*>& data) const {
  std::vector<kiln_tensor> out;
  for (size_t t = 0; t < tensors.size(); ++t) {
    const TensorLayout& layout = tensors[t];
    kiln_tensor tensor{};
    tensor.data = t < data.size() ? data[t] : nullptr;
    tensor.dtype = layout.dtype;
    tensor.rank = static_cast<int32_t>(layout.shape.size());
    for (size_t d = 0; d < layout.shape.size() && d < KILN_MAX_RANK; ++d) {
      tensor.shape[d] = layout.shape[d];
      tensor.strides[d] = layout.strides[d];
    }
    tensor.name = layout.name.c_str();
    out.push_back(tensor);
  }
  return out;
}

Result<WorkloadLayout> layout_workload(const Task& task, const Workload& workload) {
  WorkloadLayout layout;
  layout.workload = workload.name;
  layout.dims = workload.dims;
  for (const auto& spec : task.tensors) {
    TensorLayout tensor;
    tensor.name = spec.name;
    auto dtype = parse_dtype(spec.dtype);
    if (!dtype) return make_error("tensor " + spec.name + ": " + dtype.error().message);
    tensor.dtype = *dtype;
    tensor.is_output = spec.is_output;
    tensor.distribution = spec.distribution;
    tensor.leading_dim = spec.shape.empty() ? "" : spec.shape.front();
    for (const auto& expression : spec.shape) {
      auto extent = evaluate(expression, workload.dims);
      if (!extent) {
        return make_error("tensor " + spec.name + " shape \"" + expression + "\" at workload " +
                          workload.name + ": " + extent.error().message);
      }
      if (*extent < 1) {
        return make_error("tensor " + spec.name + " has extent " + std::to_string(*extent) +
                          " at workload " + workload.name + "; every extent must be >= 1");
      }
      tensor.shape.push_back(*extent);
    }
    tensor.strides.assign(tensor.shape.size(), 1);
    for (size_t d = tensor.shape.size(); d-- > 1;) {
      tensor.strides[d - 1] = tensor.strides[d] * tensor.shape[d];
    }
    if (!tensor.is_output && tensor.distribution.kind == "indices") {
      auto extent = evaluate(tensor.distribution.extent, workload.dims);
      if (!extent || *extent < 1)
        return make_error("tensor " + spec.name + " at workload " + workload.name +
                          ": indices extent '" + tensor.distribution.extent +
                          "' must evaluate to at least 1");
      tensor.distribution.low = 0;
      tensor.distribution.high = static_cast<double>(*extent);
    }
    if (!tensor.is_output && tensor.distribution.fixed_by_dims()) {
      auto bytes = fixed_input(tensor, workload.dims);
      if (!bytes) {
        return make_error("tensor " + spec.name + " at workload " + workload.name + ": " +
                          bytes.error().message);
      }
      tensor.fixed_bytes = std::move(*bytes);
    }
    layout.tensors.push_back(std::move(tensor));
  }
  for (const auto& rule : task.ignore_rows_where) {
    TensorLayout* output = nullptr;
    const TensorLayout* index = nullptr;
    for (auto& t : layout.tensors) {
      if (t.name == rule.output && t.is_output) output = &t;
      if (t.name == rule.index && !t.is_output) index = &t;
    }
    if (output == nullptr || index == nullptr || index->fixed_bytes.empty() ||
        (!rule.untouched && index->elements() != output->shape[0])) {
      return make_error("ignore_rows_where (" + rule.output + " by " + rule.index +
                        ") does not fit workload " + workload.name +
                        "; the loader should have refused this task");
    }
    const int size = dtype_size(index->dtype);
    const auto index_value = [&](int64_t i) {
      uint64_t bits = 0;
      std::memcpy(&bits, index->fixed_bytes.data() + i * size, static_cast<size_t>(size));
      return decode(index->dtype, bits);
    };
    if (rule.untouched) {
      output->ignored_rows.assign(static_cast<size_t>(output->shape[0]), kRowUntouched);
      for (int64_t i = 0; i < index->elements(); ++i) {
        const double row = index_value(i);
        if (row >= 0 && row < static_cast<double>(output->shape[0]))
          output->ignored_rows[static_cast<size_t>(row)] = 0;
      }
      continue;
    }
    output->ignored_rows.resize(static_cast<size_t>(output->shape[0]), 0);
    for (int64_t r = 0; r < output->shape[0]; ++r)
      if (index_value(r) == static_cast<double>(rule.equals))
        output->ignored_rows[static_cast<size_t>(r)] = kRowIgnored;
  }
  for (const auto& spec : task.scalars) {
    ScalarValue scalar;
    scalar.name = spec.name;
    if (spec.dtype == "i64") {
      scalar.dtype = KILN_I64;
      auto value = evaluate(spec.value, workload.dims);
      if (!value) return make_error("scalar " + spec.name + ": " + value.error().message);
      scalar.i = *value;
    } else {
      scalar.dtype = KILN_F64;
      auto value = scalar_as_double(spec.value, workload.dims);
      if (!value) return make_error("scalar " + spec.name + ": " + value.error().message);
      scalar.f = *value;
    }
    layout.scalars.push_back(std::move(scalar));
  }
  if (!task.flops.empty()) {
    auto flops = evaluate(task.flops, workload.dims);
    if (flops) layout.flops = static_cast<double>(*flops);
  }
  if (!task.bytes.empty()) {
    auto bytes = evaluate(task.bytes, workload.dims);
    if (bytes) layout.bytes = static_cast<double>(*bytes);
  }
  return layout;
}

Result<Workload> find_workload(const Task& task, const std::string& name) {
  std::string names;
  for (const auto& workload : task.workloads) {
    if (workload.name == name) return workload;
    names += (names.empty() ? "" : ", ") + workload.name;
  }
  for (const auto& workload : task.sim_workloads) {
    if (workload.name == name) return workload;
  }
  return make_error("task " + task.name + " has no workload \"" + name + "\"; its workloads are " +
                    names);
}

}  // namespace kiln::tasks
