#include "kiln/taskcheck/wrong_candidate.h"

#include <cstdio>

#include "kiln/tasks/element_check.h"

namespace kiln::taskcheck {

namespace {

// The wrapper's CUDA code, after the starter. KILN_CHECK_* are defined before it. Element
// values are handled as bit patterns: a float format is decoded generically (exponent and
// mantissa widths), so f16, bf16, f32, f64, e4m3 and e5m2 share one code path.
constexpr const char* kWrapper = R"CUDA(
#undef kiln_launch

namespace kiln_check {

struct Format {
  int bytes;
  int exp_bits;             // 0: an integer type
  int man_bits;
  unsigned long long max_finite;  // the largest finite magnitude's bit pattern
  bool is_signed;           // integers
};

__device__ Format format_of(int dtype) {
  switch (dtype) {
    case KILN_F16: return {2, 5, 10, 0x7BFFull, true};
    case KILN_BF16: return {2, 8, 7, 0x7F7Full, true};
    case KILN_F32: return {4, 8, 23, 0x7F7FFFFFull, true};
    case KILN_F64: return {8, 11, 52, 0x7FEFFFFFFFFFFFFFull, true};
    case KILN_E4M3: return {1, 4, 3, 0x7Eull, true};
    case KILN_E5M2: return {1, 5, 2, 0x7Bull, true};
    case KILN_I8: return {1, 0, 0, 0, true};
    case KILN_U8: return {1, 0, 0, 0, false};
    case KILN_I32: return {4, 0, 0, 0, true};
    default: return {8, 0, 0, 0, true};  // KILN_I64
  }
}

__device__ double pow2(int e) {  // exact for -1074 <= e <= 1023
  const int half = e / 2;
  return __longlong_as_double(static_cast<long long>(half + 1023) << 52) *
         __longlong_as_double(static_cast<long long>(e - half + 1023) << 52);
}

// The value of a magnitude bit pattern (sign bit clear) of a float format.
__device__ double magnitude(const Format& f, unsigned long long bits) {
  const unsigned long long exponent = bits >> f.man_bits;
  const unsigned long long mantissa = bits & ((1ull << f.man_bits) - 1);
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  if (exponent == 0) return static_cast<double>(mantissa) * pow2(1 - bias - f.man_bits);
  return static_cast<double>(mantissa | (1ull << f.man_bits)) *
         pow2(static_cast<int>(exponent) - bias - f.man_bits);
}

__device__ unsigned long long load_bits(const unsigned char* p, int bytes) {
  unsigned long long v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<unsigned long long>(p[i]) << (8 * i);
  return v;
}

__device__ void store_bits(unsigned char* p, int bytes, unsigned long long v) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}

// The smallest change of a float beyond KILN_CHECK_FACTOR times the tolerance at its value,
// plus two ulps, away from zero; where the format has no such value, the farthest finite one.
__device__ unsigned long long perturb_float(const Format& f, unsigned long long bits) {
  const unsigned long long sign = 1ull << (8 * f.bytes - 1);
  const unsigned long long mag = bits & (sign - 1);
  if (mag > f.max_finite) return 0;  // NaN or infinity: any finite value differs
  const double old = magnitude(f, mag);
  const double threshold = KILN_CHECK_FACTOR * (KILN_CHECK_ATOL + KILN_CHECK_RTOL * old);
  if (magnitude(f, f.max_finite) - old <= threshold)
    return ((bits & sign) ^ sign) | f.max_finite;  // the far end of the other sign
  unsigned long long lo = mag, hi = f.max_finite;    // hi is beyond the threshold, lo is not
  while (hi - lo > 1) {
    const unsigned long long mid = lo + (hi - lo) / 2;
    if (magnitude(f, mid) - old > threshold) hi = mid; else lo = mid;
  }
  hi = hi + 2 <= f.max_finite ? hi + 2 : f.max_finite;
  return (bits & sign) | hi;
}

__device__ unsigned long long perturb_integer(const Format& f, unsigned long long bits) {
  const int width = 8 * f.bytes;
  double value;
  double low, high;
  if (f.is_signed) {
    long long v = static_cast<long long>(bits << (64 - width)) >> (64 - width);
    value = static_cast<double>(v);
    high = width == 64 ? 9.2e18 : static_cast<double>((1ll << (width - 1)) - 1);
    low = width == 64 ? -9.2e18 : -static_cast<double>(1ll << (width - 1));
  } else {
    value = static_cast<double>(bits);
    low = 0;
    high = static_cast<double>((1ull << width) - 1);
  }
  const double step =
      floor(KILN_CHECK_FACTOR * (KILN_CHECK_ATOL + KILN_CHECK_RTOL * fabs(value))) + 1;
  double next = value + step;
  if (next > high) next = value - step;
  if (next < low) next = high - value > value - low ? high : low;
  const long long out = static_cast<long long>(next);
  return static_cast<unsigned long long>(out) & (width == 64 ? ~0ull : (1ull << width) - 1);
}

// The element offset of a logical (row-major) index.
__host__ __device__ long long offset_of(const kiln_tensor& t, long long logical) {
  long long offset = 0;
  for (int d = t.rank - 1; d >= 0; --d) {
    offset += (logical % t.shape[d]) * t.strides[d];
    logical /= t.shape[d];
  }
  return offset;
}

__host__ __device__ long long elements(const kiln_tensor& t) {
  long long n = 1;
  for (int d = 0; d < t.rank; ++d) n *= t.shape[d];
  return n;
}

// The rows outside the contract (task.json "ignore_rows_where" on the target output): row r
// (its first index) is ignored when index tensor i holds equals[i] at r. With no rule every
// row is in the contract.
struct Ignored {
  int count;
  kiln_tensor index[KILN_CHECK_IGNORE_MAX];
  long long equals[KILN_CHECK_IGNORE_MAX];
};

__device__ bool row_ignored(const Ignored& g, long long row) {
  for (int i = 0; i < g.count; ++i) {
    const Format f = format_of(g.index[i].dtype);
    const int width = 8 * f.bytes;
    const unsigned long long bits = load_bits(
        static_cast<const unsigned char*>(g.index[i].data) + offset_of(g.index[i], row) * f.bytes,
        f.bytes);
    const long long value =
        width == 64 ? static_cast<long long>(bits)
                    : static_cast<long long>(bits << (64 - width)) >> (64 - width);
    if (value == g.equals[i]) return true;
  }
  return false;
}

// The elements of one row: with ignore rules a row is an index along the first dimension;
// without, along the first dimension longer than 1 (so a [1, N] output has N rows of one).
__host__ __device__ long long row_elements(const kiln_tensor& t, const Ignored& g) {
  if (g.count > 0 || t.rank == 0) return t.rank == 0 ? 1 : elements(t) / t.shape[0];
  for (int d = 0; d < t.rank; ++d)
    if (t.shape[d] > 1) return elements(t) / t.shape[d];
  return elements(t);
}

// Moves `count` elements beyond the tolerance: from the middle element on, in row-major order,
// skipping ignored rows and wrapping around (one thread: a few elements).
__global__ void perturb_kernel(kiln_tensor t, long long count, Ignored g) {
  const Format f = format_of(t.dtype);
  const long long total = elements(t), per_row = row_elements(t, g), rows = total / per_row;
  long long row = (total / 2) / per_row, column = (total / 2) % per_row, done = 0;
  for (long long visited = 0; visited < rows && done < count; ++visited) {
    if (!row_ignored(g, row)) {
      for (; column < per_row && done < count; ++column, ++done) {
        unsigned char* p =
            static_cast<unsigned char*>(t.data) + offset_of(t, row * per_row + column) * f.bytes;
        const unsigned long long bits = load_bits(p, f.bytes);
        store_bits(p, f.bytes, f.exp_bits ? perturb_float(f, bits) : perturb_integer(f, bits));
      }
    }
    column = 0;
    row = (row + 1) % rows;
  }
}

// The first element of the last row in the contract, or -1 when every row is ignored.
__global__ void last_row_kernel(kiln_tensor t, Ignored g, long long* first) {
  const long long per_row = row_elements(t, g);
  long long row = elements(t) / per_row - 1;
  while (row >= 0 && row_ignored(g, row)) --row;
  *first = row < 0 ? -1 : row * per_row;
}

// to_scratch: the row's elements [*first, *first + count) -> scratch; else scratch -> tensor.
__global__ void copy_kernel(kiln_tensor t, const long long* first, long long count,
                            unsigned char* scratch, bool to_scratch) {
  if (*first < 0) return;
  const int bytes = format_of(t.dtype).bytes;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    unsigned char* p = static_cast<unsigned char*>(t.data) + offset_of(t, *first + i) * bytes;
    for (int b = 0; b < bytes; ++b) {
      if (to_scratch) scratch[i * bytes + b] = p[b]; else p[b] = scratch[i * bytes + b];
    }
  }
}

__host__ int bytes_of(int dtype) {
  switch (dtype) {
    case KILN_F16: case KILN_BF16: return 2;
    case KILN_F32: case KILN_I32: return 4;
    case KILN_F64: case KILN_I64: return 8;
    default: return 1;
  }
}

__host__ Ignored ignored_rows(const kiln_tensor* tensors, int n_tensors) {
  Ignored g{};
  const int index[] = {KILN_CHECK_IGNORE_INDEX};
  const long long equals[] = {KILN_CHECK_IGNORE_EQUALS};
  for (int i = 0; i < KILN_CHECK_IGNORE_COUNT && i < KILN_CHECK_IGNORE_MAX; ++i) {
    if (index[i] < 0 || index[i] >= n_tensors) continue;
    g.index[g.count] = tensors[index[i]];
    g.equals[g.count++] = equals[i];
  }
  return g;
}

}  // namespace kiln_check

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  using namespace kiln_check;
  const int target = KILN_CHECK_FIRST_OUTPUT + KILN_CHECK_OUTPUT;
#if KILN_CHECK_MODE == 2
  (void)tensors; (void)n_tensors; (void)scalars; (void)n_scalars; (void)stream; (void)target;
  return KILN_OK;  // writes nothing
#else
  if (target >= n_tensors) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& out = tensors[target];
  const long long total = elements(out);
  if (total <= 0) return kiln_check_starter_launch(tensors, n_tensors, scalars, n_scalars, stream);
  const Ignored ignored = ignored_rows(tensors, n_tensors);
#if KILN_CHECK_MODE == 0
  const int status = kiln_check_starter_launch(tensors, n_tensors, scalars, n_scalars, stream);
  if (status != KILN_OK) return status;
  // One element more than the task's max_mismatch_fraction of all of them forgives.
  const long long count = static_cast<long long>(floor(KILN_CHECK_FRACTION * total)) + 1;
  perturb_kernel<<<1, 1, 0, stream>>>(out, count < total ? count : total, ignored);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
#else
  const long long count = row_elements(out, ignored);
  unsigned char* scratch = nullptr;
  const size_t row_bytes = (static_cast<size_t>(count) * bytes_of(out.dtype) + 7) / 8 * 8;
  if (cudaMallocAsync(reinterpret_cast<void**>(&scratch), row_bytes + sizeof(long long),
                      stream) != cudaSuccess)
    return KILN_ERR_LAUNCH;
  long long* first = reinterpret_cast<long long*>(scratch + row_bytes);  // the row, on the device
  const int blocks = static_cast<int>(count / 256 + 1 < 1024 ? count / 256 + 1 : 1024);
  last_row_kernel<<<1, 1, 0, stream>>>(out, ignored, first);
  copy_kernel<<<blocks, 256, 0, stream>>>(out, first, count, scratch, true);
  const int status = kiln_check_starter_launch(tensors, n_tensors, scalars, n_scalars, stream);
  copy_kernel<<<blocks, 256, 0, stream>>>(out, first, count, scratch, false);
  cudaFreeAsync(scratch, stream);
  if (status != KILN_OK) return status;
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
#endif
#endif
}
)CUDA";

// How far beyond the tolerance a perturbed element lands: 4x, so that it fails the worker's
// comparison with the baseline (at twice the tolerance) as well as the reference's. A task
// that forgives a fraction of near misses gets perturb_one beyond the near-miss bound (which
// no fraction forgives) and perturb_fraction at 4x on one element more than the fraction.
constexpr double kPerturbFactor = 4;
constexpr double kFarPerturbFactor = tasks::kNearMissFactor + kPerturbFactor;
constexpr size_t kMaxIgnoreRules = 4;  // KILN_CHECK_IGNORE_MAX

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  std::string out = text;
  if (out.find_first_of(".eEn") == std::string::npos) out += ".0";
  return out;
}

size_t input_count(const tasks::Task& task) {
  size_t n = 0;
  for (const auto& tensor : task.tensors) n += tensor.is_output ? 0 : 1;
  return n;
}

const tasks::TensorSpec* output_spec(const tasks::Task& task, size_t output) {
  size_t seen = 0;
  for (const auto& tensor : task.tensors)
    if (tensor.is_output && seen++ == output) return &tensor;
  return nullptr;
}

// The ignore_rows_where rules on `out_name` as the wrapper's defines: the ABI positions of their
// index tensors and the values that mark a row outside the contract.
std::string ignore_defines(const tasks::Task& task, const std::string& out_name) {
  std::string index, equals;
  size_t count = 0;
  for (const tasks::IgnoredRows& rule : task.ignore_rows_where) {
    if (rule.output != out_name || count == kMaxIgnoreRules) continue;
    for (size_t t = 0; t < task.tensors.size(); ++t) {
      if (task.tensors[t].name != rule.index) continue;
      index += (count ? ", " : "") + std::to_string(t);
      equals += (count ? ", " : "") + std::to_string(rule.equals) + "LL";
      ++count;
    }
  }
  if (count == 0) index = "-1", equals = "0LL";  // no zero-length arrays in C++
  return "#define KILN_CHECK_IGNORE_MAX " + std::to_string(kMaxIgnoreRules) +
         "\n#define KILN_CHECK_IGNORE_COUNT " + std::to_string(count) +
         "\n#define KILN_CHECK_IGNORE_INDEX " + index + "\n#define KILN_CHECK_IGNORE_EQUALS " +
         equals + "\n";
}

}  // namespace

std::string kind_name(WrongKind kind) {
  switch (kind) {
    case WrongKind::kPerturbOne:
      return "perturb_one";
    case WrongKind::kPerturbFraction:
      return "perturb_fraction";
    case WrongKind::kDropTail:
      return "drop_tail";
    case WrongKind::kUnwritten:
      return "unwritten";
  }
  return "unknown";
}

WrongCandidate wrong_candidate(const tasks::Task& task, const std::string& starter, WrongKind kind,
                               size_t output) {
  const tasks::TensorSpec* spec = output_spec(task, output);
  const std::string out_name = spec ? spec->name : "output" + std::to_string(output);
  const double fraction = task.tolerance.max_mismatch_fraction;
  const bool forgiving = fraction > 0;
  WrongCandidate candidate;
  candidate.kind = kind;
  int mode = 0;
  double factor = kPerturbFactor, perturbed_fraction = 0;
  const std::string contract = task.ignore_rows_where.empty() ? "" : " (a row in the contract)";
  switch (kind) {
    case WrongKind::kPerturbOne:
      factor = forgiving ? kFarPerturbFactor : kPerturbFactor;
      candidate.name = "perturb_one[" + out_name + "]";
      candidate.what = "the starter, then the middle element of " + out_name + contract +
                       " moved to the nearest value beyond " + number(factor) +
                       "x the tolerance (plus two ulps)";
      break;
    case WrongKind::kPerturbFraction:
      perturbed_fraction = fraction;
      candidate.name = "perturb_fraction[" + out_name + "]";
      candidate.what = "the starter, then one element more than max_mismatch_fraction (" +
                       number(fraction) + ") of " + out_name + ", from the middle" + contract +
                       " on, each moved beyond 4x the tolerance (plus two ulps)";
      break;
    case WrongKind::kDropTail:
      mode = 1;
      candidate.name = "drop_tail[" + out_name + "]";
      candidate.what = "the starter, with the last row of " + out_name + contract +
                       " put back as it was before the call (not written)";
      break;
    case WrongKind::kUnwritten:
      mode = 2;
      candidate.name = "unwritten";
      candidate.what = "a kiln_launch that returns KILN_OK and writes no output";
      break;
  }
  std::string text = "// Written by `kiln task check` (a negative test of task " + task.name +
                     "): " + candidate.what +
                     ".\n// Every task must refuse it.\n#include <cuda_runtime.h>\n#include "
                     "<math.h>\n#include \"kiln/abi.h\"\n";
  text += "#define KILN_CHECK_FIRST_OUTPUT " + std::to_string(input_count(task)) + "\n";
  text += "#define KILN_CHECK_OUTPUT " + std::to_string(output) + "\n";
  text += "#define KILN_CHECK_MODE " + std::to_string(mode) + "\n";
  text += "#define KILN_CHECK_ATOL " + number(task.tolerance.atol) + "\n";
  text += "#define KILN_CHECK_RTOL " + number(task.tolerance.rtol) + "\n";
  text += "#define KILN_CHECK_FACTOR " + number(factor) + "\n";
  text += "#define KILN_CHECK_FRACTION " + number(perturbed_fraction) + "\n";
  text += ignore_defines(task, out_name);
  text += "#define kiln_launch kiln_check_starter_launch\n#line 1 \"starter.cu\"\n";
  text += starter;
  if (!text.empty() && text.back() != '\n') text += "\n";
  text += "#line 1 \"kiln_check_wrapper.cu\"";
  text += kWrapper;
  candidate.source = std::move(text);
  return candidate;
}

std::vector<WrongCandidate> wrong_candidates(const tasks::Task& task, const std::string& starter) {
  std::vector<WrongCandidate> out;
  const size_t outputs = task.tensors.size() - input_count(task);
  for (size_t i = 0; i < outputs; ++i)
    out.push_back(wrong_candidate(task, starter, WrongKind::kPerturbOne, i));
  if (task.tolerance.max_mismatch_fraction > 0) {
    for (size_t i = 0; i < outputs; ++i)
      out.push_back(wrong_candidate(task, starter, WrongKind::kPerturbFraction, i));
  }
  for (size_t i = 0; i < outputs; ++i)
    out.push_back(wrong_candidate(task, starter, WrongKind::kDropTail, i));
  out.push_back(wrong_candidate(task, starter, WrongKind::kUnwritten, 0));
  return out;
}

std::string broken_candidate(const std::string& starter, int* line) {
  std::string text = starter;
  if (!text.empty() && text.back() != '\n') text += "\n";
  int lines = 0;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  text +=
      "// Added by `kiln task check`: a call to a function that does not exist, so this "
      "candidate must not compile.\n"
      "int kiln_check_broken() { return kiln_check_function_that_does_not_exist(); }\n";
  if (line) *line = lines + 2;
  return text;
}

}  // namespace kiln::taskcheck
