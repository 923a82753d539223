#include "kiln/tasks/output_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include "kiln/tasks/element_check.h"
#include "kiln/tasks/numeric_codec.h"
#include "kiln/tasks/tensor_layout.h"

namespace kiln::tasks {

namespace {

uint64_t load_bits(const void* data, int64_t i, int size) {
  uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const unsigned char*>(data) + i * size, static_cast<size_t>(size));
  return bits;
}

std::string format_index(const std::vector<int64_t>& index) {
  std::string out = "[";
  for (size_t d = 0; d < index.size(); ++d) out += (d ? ", " : "") + std::to_string(index[d]);
  return out + "]";
}

std::string format_number(double x) {
  std::ostringstream out;
  out.precision(6);
  out << x;
  return out.str();
}

// NaN and infinities cannot go into JSON numbers; they are written as strings.
nlohmann::json json_number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

// Counts a mismatch at flat index i and lists it while fewer than kMaxListed are.
void note_mismatch(ErrorStats& stats, int64_t i, const std::vector<int64_t>& shape,
                   const std::vector<int64_t>* row_ids, double actual, double expected, bool far) {
  ++stats.mismatches;
  if (far) ++stats.far;
  if (stats.first_mismatches.size() >= ErrorStats::kMaxListed) return;
  Mismatch m;
  int64_t flat = i;
  m.index.assign(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    m.index[d] = flat % shape[d];
    flat /= shape[d];
  }
  if (row_ids != nullptr && !m.index.empty() && m.index[0] < static_cast<int64_t>(row_ids->size()))
    m.index[0] = (*row_ids)[static_cast<size_t>(m.index[0])];
  m.expected = expected;
  m.actual = actual;
  stats.first_mismatches.push_back(std::move(m));
}

}  // namespace

bool ErrorStats::passes(double max_mismatch_fraction) const {
  if (checked == 0 || far > 0) return false;
  return static_cast<double>(mismatches) <= max_mismatch_fraction * static_cast<double>(checked);
}

void ErrorStats::merge(const ErrorStats& other) {
  checked += other.checked;
  mismatches += other.mismatches;
  far += other.far;
  nan += other.nan;
  inf += other.inf;
  poisoned += other.poisoned;
  stray += other.stray;
  max_abs = std::max(max_abs, other.max_abs);
  max_rel = std::max(max_rel, other.max_rel);
  for (const auto& m : other.first_mismatches) {
    if (first_mismatches.size() < kMaxListed) first_mismatches.push_back(m);
  }
}

nlohmann::json ErrorStats::to_json() const {
  nlohmann::json listed = nlohmann::json::array();
  for (const auto& m : first_mismatches) {
    listed.push_back({{"index", m.index},
                      {"expected", json_number(m.expected)},
                      {"actual", json_number(m.actual)}});
  }
  return {{"checked", checked},
          {"max_abs", json_number(max_abs)},
          {"max_rel", json_number(max_rel)},
          {"mismatches", mismatches},
          {"far_mismatches", far},
          {"nan", nan},
          {"inf", inf},
          {"unwritten", poisoned},
          {"written_outside_rows", stray},
          {"first_mismatches", listed}};
}

std::string ErrorStats::summary() const {
  std::string out = std::to_string(mismatches) + " of " + std::to_string(checked) +
                    " elements outside atol + rtol*|ref| (max abs error " + format_number(max_abs) +
                    ", max rel error " + format_number(max_rel);
  if (nan > 0) out += ", " + std::to_string(nan) + " NaN";
  if (inf > 0) out += ", " + std::to_string(inf) + " inf";
  if (poisoned > 0) out += ", " + std::to_string(poisoned) + " never written";
  out += ")";
  if (stray > 0) {
    out += "; " + std::to_string(stray) +
           " written in rows the op must leave untouched (they no longer hold the poison)";
  }
  if (far > 0) {
    out += "; " + std::to_string(far) + " beyond " + format_number(kNearMissFactor) +
           "x the tolerance, which no max_mismatch_fraction forgives";
  }
  if (!first_mismatches.empty()) {
    const Mismatch& m = first_mismatches.front();
    out += "; first at " + format_index(m.index) + ": expected " + format_number(m.expected) +
           ", got " + format_number(m.actual);
  }
  return out;
}

ErrorStats compare_host(const void* actual, const void* expected, kiln_dtype dtype,
                        int64_t elements, const std::vector<int64_t>& shape,
                        const Tolerance& tolerance, uint64_t poison_pattern,
                        const std::vector<int64_t>* row_ids,
                        const std::vector<uint8_t>* ignored_rows) {
  ErrorStats stats;
  const int size = dtype_size(dtype);
  const int64_t row_elements =
      shape.empty() || shape[0] == 0 ? elements : std::max<int64_t>(1, elements / shape[0]);
  for (int64_t i = 0; i < elements; ++i) {
    uint8_t row_flag = 0;
    if (ignored_rows != nullptr) {
      const auto row = static_cast<size_t>(i / row_elements);
      if (row < ignored_rows->size()) row_flag = (*ignored_rows)[row];
      if (row_flag == kRowIgnored) continue;
    }
    ++stats.checked;
    const uint64_t abits = load_bits(actual, i, size);
    const double a = decode(dtype, abits);
    if (row_flag == kRowUntouched) {
      // Outside the rows the op writes: the poison must still be there, bit for bit.
      if (abits != poison_pattern) {
        ++stats.stray;
        note_mismatch(stats, i, shape, row_ids, a, decode(dtype, poison_pattern), true);
      }
      continue;
    }
    const double e = decode(dtype, load_bits(expected, i, size));
    if (abits == poison_pattern) ++stats.poisoned;
    if (is_nan(a)) ++stats.nan;
    if (is_inf(a)) ++stats.inf;
    if (!is_nan(a) && !is_inf(a) && !is_nan(e) && !is_inf(e)) {
      const double diff = magnitude(a - e);
      stats.max_abs = std::max(stats.max_abs, diff);
      if (e != 0) stats.max_rel = std::max(stats.max_rel, diff / magnitude(e));
    }
    if (!element_passes(a, e, tolerance.atol, tolerance.rtol))
      note_mismatch(stats, i, shape, row_ids, a, e,
                    element_far(a, e, tolerance.atol, tolerance.rtol));
  }
  return stats;
}

int64_t count_bitwise_differences(const void* a, const void* b, kiln_dtype dtype,
                                  int64_t elements) {
  const int size = dtype_size(dtype);
  int64_t count = 0;
  for (int64_t i = 0; i < elements; ++i) {
    if (load_bits(a, i, size) != load_bits(b, i, size)) ++count;
  }
  return count;
}

}  // namespace kiln::tasks
