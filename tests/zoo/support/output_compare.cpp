#include "output_compare.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <sstream>

#include "kiln/zoo/numeric.h"
#include "kiln/zoo/parallel_for.h"

namespace kiln::zoo {
namespace {

std::string number(double value) {
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

// Checks elements [begin, end) into `partial`.
void compare_range(const HostTensor& expected, const HostTensor& actual, double atol, double rtol,
                   int64_t begin, int64_t end, size_t max_reported, Comparison& partial) {
  const bool integer = !is_floating(expected.dtype);
  for (int64_t i = begin; i < end; ++i) {
    const double e = expected.at(i);
    const double a = actual.at(i);
    ++partial.checked;
    bool ok = false;
    if (integer) {
      ok = a == e;
    } else if (std::isnan(e)) {
      ok = std::isnan(a);
    } else if (std::isinf(e)) {
      ok = a == e;
    } else if (!std::isfinite(a)) {
      ++partial.unexpected_nonfinite;
    } else {
      const double error = std::fabs(a - e);
      ok = error <= atol + rtol * std::fabs(e);
      if (error > partial.max_abs_error || partial.max_abs_index < 0) {
        partial.max_abs_error = error;
        partial.max_abs_index = i;
      }
      if (e != 0) partial.max_rel_error = std::max(partial.max_rel_error, error / std::fabs(e));
    }
    if (integer && a != e) {
      const double error = std::fabs(a - e);
      if (error > partial.max_abs_error) {
        partial.max_abs_error = error;
        partial.max_abs_index = i;
      }
    }
    if (!ok) {
      ++partial.mismatches;
      if (partial.first.size() < max_reported) partial.first.push_back({i, e, a});
    }
  }
}

void merge(Comparison& total, const Comparison& part, size_t max_reported) {
  total.checked += part.checked;
  total.mismatches += part.mismatches;
  total.unexpected_nonfinite += part.unexpected_nonfinite;
  if (part.max_abs_index >= 0 &&
      (total.max_abs_index < 0 || part.max_abs_error > total.max_abs_error ||
       (part.max_abs_error == total.max_abs_error && part.max_abs_index < total.max_abs_index))) {
    total.max_abs_error = part.max_abs_error;
    total.max_abs_index = part.max_abs_index;
  }
  total.max_rel_error = std::max(total.max_rel_error, part.max_rel_error);
  total.first.insert(total.first.end(), part.first.begin(), part.first.end());
  std::sort(total.first.begin(), total.first.end(),
            [](const Mismatch& a, const Mismatch& b) { return a.index < b.index; });
  if (total.first.size() > max_reported) total.first.resize(max_reported);
}

}  // namespace

Comparison compare_outputs(const HostTensor& expected, const HostTensor& actual, double atol,
                           double rtol, const std::optional<std::vector<int64_t>>& rows,
                           int64_t row_length, size_t max_reported) {
  Comparison total;
  total.tensor = expected.name;
  total.shape = expected.shape;
  // Spans of elements to check: whole tensor, or the sampled rows.
  std::vector<std::pair<int64_t, int64_t>> spans;
  const int64_t count = std::min(expected.element_count(), actual.element_count());
  if (rows) {
    for (const int64_t r : *rows)
      spans.emplace_back(r * row_length, std::min(count, (r + 1) * row_length));
  } else {
    constexpr int64_t kSpan = 1 << 16;
    for (int64_t begin = 0; begin < count; begin += kSpan)
      spans.emplace_back(begin, std::min(count, begin + kSpan));
  }
  std::mutex mutex;
  parallel_for(static_cast<int64_t>(spans.size()), 1, [&](int64_t begin, int64_t end) {
    Comparison part;
    for (int64_t s = begin; s < end; ++s) {
      const auto [first, last] = spans[static_cast<size_t>(s)];
      compare_range(expected, actual, atol, rtol, first, last, max_reported, part);
    }
    const std::lock_guard<std::mutex> lock(mutex);
    merge(total, part, max_reported);
  });
  return total;
}

std::string Comparison::describe(double atol, double rtol) const {
  std::ostringstream out;
  out << "output " << tensor << ": " << mismatches << " of " << checked
      << " checked elements outside |out - ref| <= " << number(atol) << " + " << number(rtol)
      << "*|ref|";
  if (unexpected_nonfinite > 0) {
    out << " (" << unexpected_nonfinite << " NaN/Inf where the reference is finite)";
  }
  out << "; max abs error " << number(max_abs_error);
  if (unexpected_nonfinite > 0) out << " (over finite outputs)";
  if (max_abs_index >= 0) out << " at " << tensor << format_index(shape, max_abs_index);
  out << ", max rel error " << number(max_rel_error);
  if (!first.empty()) {
    out << "; first mismatches:";
    for (const Mismatch& m : first) {
      out << " " << tensor << format_index(shape, m.index) << " expected " << number(m.expected)
          << " got " << number(m.actual) << ";";
    }
  }
  return out.str();
}

NonFinite find_nonfinite(const HostTensor& tensor) {
  NonFinite total;
  if (!is_floating(tensor.dtype)) return total;
  constexpr int64_t kSpan = 1 << 16;
  const int64_t count = tensor.element_count();
  std::mutex mutex;
  parallel_for((count + kSpan - 1) / kSpan, 1, [&](int64_t begin, int64_t end) {
    NonFinite part;
    for (int64_t i = begin * kSpan; i < std::min(count, end * kSpan); ++i) {
      if (!std::isfinite(tensor.at(i))) {
        if (part.first < 0) part.first = i;
        ++part.count;
      }
    }
    const std::lock_guard<std::mutex> lock(mutex);
    total.count += part.count;
    if (part.first >= 0 && (total.first < 0 || part.first < total.first)) total.first = part.first;
  });
  return total;
}

ChangedOutside find_changed_outside_rows(const HostTensor& tensor, const std::vector<int64_t>& rows,
                                         int64_t row_length, unsigned char fill) {
  ChangedOutside found;
  const int64_t count = tensor.element_count();
  const auto size = static_cast<int64_t>(dtype_size(tensor.dtype));
  std::vector<int64_t> sorted = rows;
  std::sort(sorted.begin(), sorted.end());
  size_t next = 0;  // the first written row at or after the current element's row
  for (int64_t i = 0; i < count; ++i) {
    const int64_t row = row_length > 0 ? i / row_length : 0;
    while (next < sorted.size() && sorted[next] < row) ++next;
    if (next < sorted.size() && sorted[next] == row) continue;
    const unsigned char* byte = tensor.bytes.data() + i * size;
    if (std::any_of(byte, byte + size, [&](unsigned char b) { return b != fill; })) {
      if (found.first < 0) found.first = i;
      ++found.count;
    }
  }
  return found;
}

}  // namespace kiln::zoo
