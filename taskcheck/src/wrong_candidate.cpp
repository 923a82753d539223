#include "kiln/taskcheck/wrong_candidate.h"

#include <cstdio>

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
__device__ long long offset_of(const kiln_tensor& t, long long logical) {
  long long offset = 0;
  for (int d = t.rank - 1; d >= 0; --d) {
    offset += (logical % t.shape[d]) * t.strides[d];
    logical /= t.shape[d];
  }
  return offset;
}

__global__ void perturb_kernel(kiln_tensor t, long long logical) {
  const Format f = format_of(t.dtype);
  unsigned char* p = static_cast<unsigned char*>(t.data) + offset_of(t, logical) * f.bytes;
  const unsigned long long bits = load_bits(p, f.bytes);
  store_bits(p, f.bytes, f.exp_bits ? perturb_float(f, bits) : perturb_integer(f, bits));
}

// to_scratch: tensor elements [first, first + count) -> scratch; else scratch -> tensor.
__global__ void copy_kernel(kiln_tensor t, long long first, long long count,
                            unsigned char* scratch, bool to_scratch) {
  const int bytes = format_of(t.dtype).bytes;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    unsigned char* p = static_cast<unsigned char*>(t.data) + offset_of(t, first + i) * bytes;
    for (int b = 0; b < bytes; ++b) {
      if (to_scratch) scratch[i * bytes + b] = p[b]; else p[b] = scratch[i * bytes + b];
    }
  }
}

__host__ long long elements(const kiln_tensor& t) {
  long long n = 1;
  for (int d = 0; d < t.rank; ++d) n *= t.shape[d];
  return n;
}

// The last row: the elements whose index along the first dimension longer than 1 is its last.
__host__ long long tail_elements(const kiln_tensor& t) {
  for (int d = 0; d < t.rank; ++d)
    if (t.shape[d] > 1) return elements(t) / t.shape[d];
  return elements(t);
}

__host__ int bytes_of(int dtype) {
  switch (dtype) {
    case KILN_F16: case KILN_BF16: return 2;
    case KILN_F32: case KILN_I32: return 4;
    case KILN_F64: case KILN_I64: return 8;
    default: return 1;
  }
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
#if KILN_CHECK_MODE == 0
  const int status = kiln_check_starter_launch(tensors, n_tensors, scalars, n_scalars, stream);
  if (status != KILN_OK) return status;
  perturb_kernel<<<1, 1, 0, stream>>>(out, total / 2);
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
#else
  const long long count = tail_elements(out);
  const long long first = total - count;
  unsigned char* scratch = nullptr;
  if (cudaMallocAsync(reinterpret_cast<void**>(&scratch),
                      static_cast<size_t>(count) * bytes_of(out.dtype), stream) != cudaSuccess)
    return KILN_ERR_LAUNCH;
  const int blocks = static_cast<int>(count / 256 + 1 < 1024 ? count / 256 + 1 : 1024);
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
// comparison with the baseline (at twice the tolerance) as well as the reference's.
constexpr double kPerturbFactor = 4;

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

}  // namespace

std::string kind_name(WrongKind kind) {
  switch (kind) {
    case WrongKind::kPerturbOne:
      return "perturb_one";
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
  WrongCandidate candidate;
  candidate.kind = kind;
  const int mode = kind == WrongKind::kPerturbOne ? 0 : kind == WrongKind::kDropTail ? 1 : 2;
  switch (kind) {
    case WrongKind::kPerturbOne:
      candidate.name = "perturb_one[" + out_name + "]";
      candidate.what = "the starter, then the middle element of " + out_name +
                       " moved to the nearest value beyond 4x the tolerance (plus two ulps)";
      break;
    case WrongKind::kDropTail:
      candidate.name = "drop_tail[" + out_name + "]";
      candidate.what = "the starter, with the last row of " + out_name +
                       " put back as it was before the call (not written)";
      break;
    case WrongKind::kUnwritten:
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
  text += "#define KILN_CHECK_FACTOR " + number(kPerturbFactor) + "\n";
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
