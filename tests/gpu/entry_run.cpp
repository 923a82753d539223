#include "entry_run.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <sstream>

#include "device_buffer.h"
#include "kiln/abi.h"
#include "kiln/zoo/numeric.h"
#include "output_compare.h"
#include "reference_run.h"
#include "zoo_case.h"

namespace kiln::zoo {
namespace {

constexpr size_t kGuardBytes = 4096;  // before and after each output
constexpr unsigned char kGuardByte = 0xa5;

std::string status_text(int status) {
  switch (status) {
    case KILN_ERR_BAD_ARGUMENT:
      return "KILN_ERR_BAD_ARGUMENT (the kernel rejected the tensors or scalars: compare its "
             "checks with test.signature and test.shapes in meta.json)";
    case KILN_ERR_UNSUPPORTED:
      return "KILN_ERR_UNSUPPORTED (the kernel does not handle this shape: fix test.shapes or "
             "the kernel's documented constraints)";
    case KILN_ERR_LAUNCH:
      return "KILN_ERR_LAUNCH (a CUDA call inside kiln_launch failed)";
    default:
      return std::to_string(status) + " (not a kiln_status)";
  }
}

std::string seconds_since(std::chrono::steady_clock::time_point start) {
  std::ostringstream out;
  out.precision(2);
  out << std::fixed
      << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s";
  return out.str();
}

}  // namespace

std::string format_number(double value, int digits) {
  std::ostringstream out;
  out.precision(digits);
  out << value;
  return out.str();
}

EntryRun::EntryRun(const ZooMeta& meta, const RunOptions& options, Report& report)
    : meta_(meta), options_(options), report_(report) {}
EntryRun::~EntryRun() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void EntryRun::run(const std::filesystem::path& library) {
  if (!setup(library)) return;
  const size_t shapes = options_.max_shapes == 0
                            ? meta_.shapes.size()
                            : std::min(options_.max_shapes, meta_.shapes.size());
  for (size_t i = 0; i < shapes; ++i) {
    run_shape(i);
    if (broken_) {
      report_.log(
          "stopping: after that error the CUDA context cannot be trusted, so the "
          "remaining shapes are not run");
      return;
    }
  }
}

// Reports a failed CUDA call. Any error but running out of memory also ends the entry:
// an asynchronous kernel fault surfaces in whatever call comes next, and after one the
// context is unusable.
bool EntryRun::check(cudaError_t error, const std::string& what) {
  if (error == cudaSuccess) return true;
  report_.failure(cuda_failure(what, error));
  if (error != cudaErrorMemoryAllocation) broken_ = true;
  return false;
}

bool EntryRun::setup(const std::filesystem::path& library) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    report_.failure(e != cudaSuccess
                        ? cuda_failure("cudaGetDeviceCount (no usable GPU or driver?)", e)
                        : "no CUDA device visible (check CUDA_VISIBLE_DEVICES)");
    return false;
  }
  if (!check(cudaSetDevice(0), "cudaSetDevice(0)")) return false;
  cudaDeviceProp prop{};
  if (!check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties(0)")) return false;
  gpu_name_ = prop.name;
  const std::string sm = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
  if (meta_.arch == "sm_90a" && !(prop.major == 9 && prop.minor == 0)) {
    report_.skip("the entry needs sm_90a (Hopper) and GPU 0 is " + gpu_name_ + " (" + sm + ")");
    return false;
  }
  if (prop.major < 8) {
    report_.skip("the entry needs sm_80 or newer and GPU 0 is " + gpu_name_ + " (" + sm + ")");
    return false;
  }
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  report_.log("GPU 0: " + gpu_name_ + " (" + sm + "), driver API " + std::to_string(driver) +
              ", runtime " + std::to_string(runtime) + ", kernel " + library.string());

  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    report_.failure("cannot load " + library.string() + ": " +
                    (why ? why : "unknown dlopen error") +
                    " (build it with: cmake --build BUILD --target zoo_kernels)");
    return false;
  }
  void* symbol = dlsym(handle, "kiln_launch");
  if (symbol == nullptr) {
    report_.failure(library.string() +
                    " does not export kiln_launch; declare it extern \"C\" "
                    "(see tasks/include/kiln/abi.h)");
    return false;
  }
  static_assert(sizeof(launch_) == sizeof(symbol));
  std::memcpy(&launch_, &symbol, sizeof launch_);  // object pointer -> function pointer
  return check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
               "cudaStreamCreateWithFlags");
}

void EntryRun::run_shape(size_t index) {
  const std::string label = "shape " + std::to_string(index + 1) + "/" +
                            std::to_string(meta_.shapes.size()) + " " +
                            format_shape(meta_.shape_json[index]);
  const uint64_t seed = case_seed(meta_.id, index, options_.seed);
  auto start = std::chrono::steady_clock::now();
  CaseResult made = make_zoo_case(meta_, index, seed);
  if (!made.error.empty()) {
    report_.failure(label + ": cannot build the inputs: " + made.error);
    return;
  }
  ZooCase& test_case = made.test_case;
  const ReferenceRun reference = run_reference(meta_.op, test_case, seed);
  if (reference.status != KILN_OK) {
    report_.failure(label + ": " + reference.error);
    return;
  }
  report_.log(label + ": inputs and CPU reference ready in " + seconds_since(start) +
              " (checking " + reference.coverage + ")");

  DeviceCase device;
  if (!upload(test_case, device, label)) return;
  bool passed = true;
  std::vector<Comparison> comparisons;
  for (const unsigned char poison :
       {static_cast<unsigned char>(0xff), static_cast<unsigned char>(0x7f)}) {
    comparisons.clear();
    if (!correct_run(test_case, device, reference, label, poison, comparisons)) {
      passed = false;
      break;
    }
  }
  if (broken_) return;
  if (passed) {
    std::string stats;
    for (const Comparison& c : comparisons) {
      stats += (stats.empty() ? "" : "; ") + c.tensor + " max abs err " +
               format_number(c.max_abs_error) + ", max rel err " + format_number(c.max_rel_error);
    }
    report_.log(label + ": PASS (" + stats + ")");
  }
  if (index + 1 != meta_.shapes.size()) return;
  if (!options_.time) {
    report_.log("timing skipped (KILN_ZOO_NO_TIMING)");
  } else if (!passed) {
    report_.log("timing skipped: the last shape is not correct");
  } else {
    time_shape(test_case, device, reference, label, meta_.shape_json[index]);
  }
}

bool EntryRun::upload(ZooCase& test_case, DeviceCase& device, const std::string& label) {
  for (HostTensor& t : test_case.inputs) {
    DeviceBuffer buffer;
    if (!check(buffer.allocate(t.bytes.size()), label + ": cudaMalloc(" + t.name + ", " +
                                                    std::to_string(t.bytes.size()) + " bytes)"))
      return false;
    if (!check(cudaMemcpyAsync(buffer.data(), t.bytes.data(), t.bytes.size(),
                               cudaMemcpyHostToDevice, stream_),
               label + ": cudaMemcpyAsync(" + t.name + " to the device)")) {
      return false;
    }
    device.descriptors.push_back(t.descriptor(buffer.data()));
    device.inputs.push_back(std::move(buffer));
  }
  for (HostTensor& t : test_case.outputs) {
    DeviceBuffer buffer;
    if (!check(
            buffer.allocate(t.bytes.size() + 2 * kGuardBytes),
            label + ": cudaMalloc(" + t.name + ", " + std::to_string(t.bytes.size()) + " bytes)"))
      return false;
    device.descriptors.push_back(t.descriptor(buffer.data() + kGuardBytes));
    device.outputs.push_back(std::move(buffer));
  }
  // Copies from pageable memory may still be in flight when the call returns.
  return check(cudaStreamSynchronize(stream_),
               label + ": cudaStreamSynchronize after uploading the inputs");
}

// One kiln_launch on the stream; false (reported) when it did not enqueue cleanly.
bool EntryRun::launch(ZooCase& test_case, DeviceCase& device, const std::string& when) {
  const kiln_scalar* scalars = test_case.scalars.empty() ? nullptr : test_case.scalars.data();
  const int status = launch_(device.descriptors.data(), static_cast<int>(device.descriptors.size()),
                             scalars, static_cast<int>(test_case.scalars.size()), stream_);
  const cudaError_t pending = cudaGetLastError();
  if (status != KILN_OK) {
    report_.failure(when + ": kiln_launch returned " + status_text(status) +
                    (pending != cudaSuccess ? "; " + cuda_failure("the launch", pending) : ""));
    return false;
  }
  if (pending != cudaSuccess) {
    report_.failure(when + ": kiln_launch returned KILN_OK but left a CUDA error: " +
                    cuda_failure("the launch", pending) +
                    " (check launch bounds, shared memory size, "
                    "and cudaFuncSetAttribute for more than 48 KiB of dynamic shared memory)");
    return false;
  }
  return true;
}

// Waits for the stream; an error here came from the kernel and ends the entry's run.
bool EntryRun::finish(const std::string& when) {
  const cudaError_t e = cudaStreamSynchronize(stream_);
  if (e == cudaSuccess) return true;
  report_.failure(when + ": " + cuda_failure("the kernel (seen at cudaStreamSynchronize)", e) +
                  "; run compute-sanitizer on the entry to find the faulting access");
  broken_ = true;
  return false;
}

bool EntryRun::copy_outputs(const ZooCase& test_case, const DeviceCase& device,
                            std::vector<HostTensor>& out, const std::string& when) {
  out.clear();
  for (size_t o = 0; o < test_case.outputs.size(); ++o) {
    const HostTensor& shape = test_case.outputs[o];
    out.push_back(make_host_tensor(shape.name, shape.dtype, shape.shape));
    if (!check(cudaMemcpyAsync(out.back().bytes.data(), device.outputs[o].data() + kGuardBytes,
                               out.back().bytes.size(), cudaMemcpyDeviceToHost, stream_),
               when + ": cudaMemcpyAsync(" + shape.name + " to the host)")) {
      broken_ = true;
      return false;
    }
  }
  if (!check(cudaStreamSynchronize(stream_),
             when + ": cudaStreamSynchronize after copying outputs")) {
    broken_ = true;
    return false;
  }
  return true;
}

std::vector<Comparison> EntryRun::compare_all(const std::vector<HostTensor>& actual,
                                              const ReferenceRun& reference) {
  std::vector<Comparison> out;
  for (size_t o = 0; o < actual.size(); ++o) {
    const Tolerance tolerance = meta_.tolerance_for(actual[o].name);
    out.push_back(compare_outputs(reference.expected[o], actual[o], tolerance.atol, tolerance.rtol,
                                  reference.rows, reference.row_length));
  }
  return out;
}

// Checks the outputs of the work just finished; reports mismatches.
bool EntryRun::check_outputs(const ZooCase& test_case, const DeviceCase& device,
                             const ReferenceRun& reference, const std::string& when,
                             std::vector<Comparison>& comparisons) {
  std::vector<HostTensor> actual;
  if (!copy_outputs(test_case, device, actual, when)) return false;
  comparisons = compare_all(actual, reference);
  bool all_passed = true;
  for (const Comparison& c : comparisons) all_passed = all_passed && c.passed();
  if (all_passed && reference.rows && reference.others_untouched) {
    // The op writes only these rows; the others hold what was there before (the poison).
    for (const HostTensor& t : actual) {
      const ChangedOutside found =
          find_changed_outside_rows(t, *reference.rows, reference.row_length, poison_);
      if (found.count > 0) {
        report_.failure(when + ": output " + t.name + " has " + std::to_string(found.count) +
                        " elements changed outside the rows the op writes, the first at " + t.name +
                        format_index(t.shape, found.first) +
                        "; write only the rows it names and leave the rest as they are");
        all_passed = false;
      }
    }
    if (!all_passed) return false;
  } else if (all_passed && reference.rows) {
    // Rows outside the sample are not compared, but they must at least be written:
    // NaN or infinity there is a poisoned (unwritten) or garbage element.
    for (const HostTensor& t : actual) {
      const NonFinite found = find_nonfinite(t);
      if (found.count > 0) {
        report_.failure(when + ": output " + t.name + " has " + std::to_string(found.count) +
                        " NaN/Inf elements (unwritten?), the first at " + t.name +
                        format_index(t.shape, found.first) + "; the sampled rows matched");
        all_passed = false;
      }
    }
    if (!all_passed) return false;
  }
  if (all_passed) return true;
  // Right only after waiting for the whole device: work escaped the given stream.
  if (cudaDeviceSynchronize() == cudaSuccess && copy_outputs(test_case, device, actual, when)) {
    bool later_passed = true;
    for (const Comparison& c : compare_all(actual, reference))
      later_passed = later_passed && c.passed();
    if (later_passed) {
      report_.failure(when +
                      ": the outputs were wrong after cudaStreamSynchronize(stream) but right "
                      "after cudaDeviceSynchronize: kiln_launch must enqueue all its work on the "
                      "stream it is given");
      return false;
    }
  }
  for (const Comparison& c : comparisons) {
    const Tolerance tolerance = meta_.tolerance_for(c.tensor);
    if (!c.passed()) report_.failure(when + ": " + c.describe(tolerance.atol, tolerance.rtol));
  }
  return false;
}

bool EntryRun::correct_run(ZooCase& test_case, DeviceCase& device, const ReferenceRun& reference,
                           const std::string& label, unsigned char poison,
                           std::vector<Comparison>& comparisons) {
  std::ostringstream when_text;
  when_text << label << " (outputs poisoned with 0x" << std::hex << static_cast<int>(poison)
            << " bytes)";
  const std::string when = when_text.str();
  poison_ = poison;
  for (size_t o = 0; o < device.outputs.size(); ++o) {
    DeviceBuffer& buffer = device.outputs[o];
    const size_t bytes = test_case.outputs[o].bytes.size();
    if (!check(cudaMemsetAsync(buffer.data(), kGuardByte, buffer.size(), stream_),
               when + ": cudaMemsetAsync(guard)") ||
        !check(cudaMemsetAsync(buffer.data() + kGuardBytes, poison, bytes, stream_),
               when + ": cudaMemsetAsync(poison)")) {
      return false;
    }
  }
  if (!check(cudaStreamSynchronize(stream_), when + ": cudaStreamSynchronize before the launch"))
    return false;
  if (!launch(test_case, device, when)) {
    if (cudaStreamSynchronize(stream_) != cudaSuccess) broken_ = true;
    return false;
  }
  if (!finish(when)) return false;
  if (!check_outputs(test_case, device, reference, when, comparisons)) return false;
  return check_guards(test_case, device, when) && check_inputs(test_case, device, when);
}

bool EntryRun::check_guards(const ZooCase& test_case, const DeviceCase& device,
                            const std::string& when) {
  std::vector<unsigned char> guard(kGuardBytes);
  for (size_t o = 0; o < device.outputs.size(); ++o) {
    const size_t bytes = test_case.outputs[o].bytes.size();
    for (const auto& [offset, where] :
         {std::pair<size_t, const char*>{0, "before"},
          std::pair<size_t, const char*>{kGuardBytes + bytes, "after"}}) {
      if (!check(cudaMemcpy(guard.data(), device.outputs[o].data() + offset, kGuardBytes,
                            cudaMemcpyDeviceToHost),
                 when + ": cudaMemcpy(guard band)")) {
        return false;
      }
      for (size_t i = 0; i < kGuardBytes; ++i) {
        if (guard[i] != kGuardByte) {
          const size_t distance = std::string(where) == "before" ? kGuardBytes - i : i + 1;
          report_.failure(when + ": the kernel wrote outside output " + test_case.outputs[o].name +
                          ": the guard band " + where + " it changed " + std::to_string(distance) +
                          " bytes " +
                          (std::string(where) == "before" ? "before its start" : "past its end"));
          return false;
        }
      }
    }
  }
  return true;
}

bool EntryRun::check_inputs(const ZooCase& test_case, const DeviceCase& device,
                            const std::string& when) {
  for (size_t i = 0; i < test_case.inputs.size(); ++i) {
    const HostTensor& t = test_case.inputs[i];
    std::vector<unsigned char> now(t.bytes.size());
    if (!check(cudaMemcpy(now.data(), device.inputs[i].data(), now.size(), cudaMemcpyDeviceToHost),
               when + ": cudaMemcpy(input " + t.name + " back)")) {
      return false;
    }
    if (now != t.bytes) {
      size_t first = 0;
      while (first < now.size() && now[first] == t.bytes[first]) ++first;
      const size_t element = first / dtype_size(t.dtype);
      report_.failure(when + ": the kernel modified its input " + t.name +
                      " (first change at element " + t.name +
                      format_index(t.shape, static_cast<int64_t>(element)) +
                      "); inputs are read-only");
      return false;
    }
  }
  return true;
}

void EntryRun::time_shape(ZooCase&, DeviceCase&, const ReferenceRun&, const std::string& label,
                          const nlohmann::ordered_json&) {
  report_.log(label + ": not timed (this run checks correctness only)");
}

}  // namespace kiln::zoo
