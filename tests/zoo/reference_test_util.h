// Helpers for the reference tests: small host tensors from literal values, and calls
// through the ABI exactly as the GPU test makes them.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "host_tensor.h"
#include "kiln/zoo/numeric.h"
#include "kiln/zoo/references.h"

namespace kiln::zoo::testing {

// A dense tensor holding `values` rounded to `dtype`.
inline HostTensor tensor(const std::string& name, kiln_dtype dtype, std::vector<int64_t> shape,
                         std::initializer_list<double> values = {}) {
  HostTensor t = make_host_tensor(name, dtype, std::move(shape));
  int64_t i = 0;
  for (const double v : values) encode_element(dtype, t.bytes.data(), i++, v);
  return t;
}

// A dense tensor whose every element is `value` (a sentinel for "not written").
inline HostTensor filled(const std::string& name, kiln_dtype dtype, std::vector<int64_t> shape,
                         double value) {
  HostTensor t = make_host_tensor(name, dtype, std::move(shape));
  for (int64_t i = 0; i < t.element_count(); ++i) encode_element(dtype, t.bytes.data(), i, value);
  return t;
}

inline kiln_scalar f64(const char* name, double value) {
  kiln_scalar s{};
  s.name = name;
  s.dtype = KILN_F64;
  s.value.f = value;
  return s;
}

inline kiln_scalar i64(const char* name, int64_t value) {
  kiln_scalar s{};
  s.name = name;
  s.dtype = KILN_I64;
  s.value.i = value;
  return s;
}

inline std::vector<kiln_tensor> describe(std::initializer_list<HostTensor*> tensors) {
  std::vector<kiln_tensor> out;
  for (HostTensor* t : tensors) out.push_back(t->descriptor());
  return out;
}

// Runs op's reference over `tensors` (inputs then outputs).
inline int call(const std::string& op, std::initializer_list<HostTensor*> tensors,
                std::vector<kiln_scalar> scalars = {}) {
  const kiln_reference_fn fn = find_zoo_reference(op);
  if (fn == nullptr) return -1;
  auto descriptors = describe(tensors);
  return fn(descriptors.data(), static_cast<int>(descriptors.size()),
            scalars.empty() ? nullptr : scalars.data(), static_cast<int>(scalars.size()));
}

inline int call_rows(const std::string& op, std::initializer_list<HostTensor*> tensors,
                     std::vector<int64_t> rows, std::vector<kiln_scalar> scalars = {}) {
  const RowReferenceFn fn = find_zoo_row_reference(op);
  if (fn == nullptr) return -1;
  auto descriptors = describe(tensors);
  return fn(descriptors.data(), static_cast<int>(descriptors.size()),
            scalars.empty() ? nullptr : scalars.data(), static_cast<int>(scalars.size()), rows);
}

inline std::vector<double> values(const HostTensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.element_count(); ++i) out.push_back(t.at(i));
  return out;
}

}  // namespace kiln::zoo::testing
