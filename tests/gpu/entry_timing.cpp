#include "entry_timing.h"

#include <cmath>
#include <ctime>
#include <memory>
#include <optional>

#include "cold_l2_timer.h"
#include "cublas_gemm.h"
#include "dim_expression.h"

namespace kiln::zoo {
namespace {

// `value` with `digits` significant digits, for the recorded numbers.
double round_significant(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return value;
  const double scale =
      std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(value)))));
  return std::round(value * scale) / scale;
}

std::string utc_date() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
  return text;
}

}  // namespace

std::unique_ptr<CublasGemm> TimedEntryRun::prepare_baseline(const ZooCase& test_case,
                                                            const DeviceCase& device,
                                                            const ReferenceRun& reference,
                                                            DeviceBuffer& out,
                                                            const std::string& when) {
  if (meta_.op != "gemm_tn" && meta_.op != "gemm_tn_int8") return nullptr;
  auto cublas = std::make_unique<CublasGemm>();
  const HostTensor& c = test_case.outputs.at(0);
  std::string error;
  bool ok = cublas->init(stream_, error);
  if (ok && out.allocate(c.bytes.size()) != cudaSuccess) {
    ok = false;
    error = "cudaMalloc of its output failed";
  }
  for (int w = 0; ok && w < options_.warmup; ++w) {
    ok = cublas->enqueue(device.descriptors[0], device.descriptors[1], out.data(), error);
  }
  if (!ok) {
    report_.failure(when + ": cuBLAS baseline: " + error);
    return nullptr;
  }
  if (!finish(when + ", cuBLAS warm-up")) return nullptr;
  HostTensor result = make_host_tensor(c.name, c.dtype, c.shape);
  if (!check(
          cudaMemcpy(result.bytes.data(), out.data(), result.bytes.size(), cudaMemcpyDeviceToHost),
          when + ": cudaMemcpy(cuBLAS output)")) {
    return nullptr;
  }
  const Comparison cmp = compare_outputs(reference.expected[0], result, meta_.atol, meta_.rtol,
                                         reference.rows, reference.row_length);
  report_.log(when + ": cuBLAS baseline vs the CPU reference: " +
              (cmp.passed() ? "agrees (max abs err " + format_number(cmp.max_abs_error) + ")"
                            : "DISAGREES: " + cmp.describe(meta_.atol, meta_.rtol)));
  return cublas;
}

void TimedEntryRun::time_shape(ZooCase& test_case, DeviceCase& device,
                               const ReferenceRun& reference, const std::string& label,
                               const nlohmann::ordered_json& shape_json) {
  const std::string when = label + " (timing)";
  std::string error;
  ColdL2Timer timer(stream_);
  if (!timer.init(error)) {
    report_.failure(when + ": " + error);
    return;
  }
  for (int w = 0; w < options_.warmup; ++w) {
    if (!launch(test_case, device, when + ", warm-up")) return;
  }
  if (!finish(when + ", warm-up")) return;
  DeviceBuffer baseline_out;
  std::unique_ptr<CublasGemm> cublas =
      prepare_baseline(test_case, device, reference, baseline_out, when);
  if (broken_) return;

  std::vector<double> kernel_us;
  std::vector<double> baseline_us;
  auto enqueue_kernel = [&](std::string&) { return launch(test_case, device, when); };
  auto enqueue_baseline = [&](std::string& why) {
    return cublas->enqueue(device.descriptors[0], device.descriptors[1], baseline_out.data(), why);
  };
  for (int s = 0; s < std::max(options_.samples, 1); ++s) {
    // Interleaved, so drifting clocks affect kernel and baseline alike.
    error.clear();
    if (!timer.time(enqueue_kernel, kernel_us, error)) {
      if (!error.empty()) report_.failure(when + ": " + error);
      broken_ = cudaStreamSynchronize(stream_) != cudaSuccess;
      return;
    }
    if (cublas && !timer.time(enqueue_baseline, baseline_us, error)) {
      report_.failure(when + ": cuBLAS baseline: " + error);
      broken_ = cudaStreamSynchronize(stream_) != cudaSuccess;
      if (broken_) return;
      cublas.reset();
      baseline_us.clear();
    }
  }
  // The timed runs' outputs must still be right.
  std::vector<Comparison> after;
  if (!check_outputs(test_case, device, reference, when + ", outputs of the timed runs", after))
    return;
  record(
      test_case, shape_json, when, median(kernel_us), static_cast<int>(kernel_us.size()),
      cublas && !baseline_us.empty() ? std::optional<double>(median(baseline_us)) : std::nullopt);
}

void TimedEntryRun::record(const ZooCase& test_case, const nlohmann::ordered_json& shape_json,
                           const std::string& when, double time_us, int samples,
                           std::optional<double> baseline_us) {
  nlohmann::ordered_json line;
  line["id"] = meta_.id;
  line["gpu"] = gpu_name_;
  line["date"] = utc_date();
  line["shape"] = shape_json;
  line["time_us"] = round_significant(time_us, 5);
  struct Rate {
    const char* key;
    const char* field;
    const std::string* expression;
    const char* unit;
    double scale;
  };
  const Rate rates[] = {{"tflops", "flops", &meta_.flops, "TFLOP/s", 1e12},
                        {"gbps", "bytes", &meta_.bytes, "GB/s", 1e9}};
  std::string summary = when + ": " + std::to_string(samples) + " cold-L2 samples, median " +
                        format_number(time_us, 6) + " us";
  for (const Rate& rate : rates) {
    line[rate.key] = nullptr;
    if (rate.expression->empty() || time_us <= 0) continue;
    auto amount = evaluate_dim_expression(*rate.expression, test_case.dims);
    if (!amount) {
      report_.failure(when + ": test." + rate.field + ": " + amount.error().message);
      continue;
    }
    if (*amount <= 0) continue;  // e.g. "flops": "0" for a pure data movement
    const double value = static_cast<double>(*amount) / (time_us * 1e-6) / rate.scale;
    line[rate.key] = round_significant(value, 4);
    summary += ", " + format_number(value) + " " + rate.unit;
  }
  line["baseline"] =
      baseline_us ? nlohmann::ordered_json("cuBLAS") : nlohmann::ordered_json(nullptr);
  line["baseline_time_us"] = baseline_us
                                 ? nlohmann::ordered_json(round_significant(*baseline_us, 5))
                                 : nlohmann::ordered_json(nullptr);
  line["command"] = options_.command;
  if (baseline_us) {
    summary += "; cuBLAS median " + format_number(*baseline_us, 6) + " us (the kernel runs at " +
               format_number(*baseline_us / time_us, 3) + "x cuBLAS's speed)";
  }
  report_.log(summary);
  report_.measurement(line);
}

}  // namespace kiln::zoo
