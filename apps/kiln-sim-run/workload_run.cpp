#include "workload_run.h"

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "input_draw.h"
#include "kiln/sim/runtime_ext.h"
#include "kiln/tasks/poison_pattern.h"
#include "kiln/tasks/reference_check.h"
#include "kiln/tasks/tensor_layout.h"

namespace kiln::sim::run {
namespace {

// Device buffers of one workload, freed on every path out.
struct DeviceTensors {
  std::vector<void*> data;
  ~DeviceTensors() {
    for (void* p : data) cudaFree(p);
  }
};

nlohmann::json harness_error(nlohmann::json out, const std::string& message) {
  out["pass"] = false;
  out["status"] = "harness_error";
  out["message"] = message;
  return out;
}

std::string cuda_error_text(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
}

// Device printf text one workload reports; the rest is counted in printf_dropped_bytes.
constexpr size_t kMaxPrintfPerWorkload = 64 * 1024;

// The simulator's record of this workload: launches with stats, faults, diagnostics, and what
// the kernels printed.
void attach_report(nlohmann::json& out) {
  const auto report = nlohmann::json::parse(kiln_sim_report());
  out["launches"] = report["launches"];
  out["faults"] = report["last_faults"];
  out["diagnostics"] = report["diagnostics"];
  std::string text = report.value("printf_output", "");
  uint64_t dropped = report.value("printf_dropped_bytes", uint64_t{0});
  if (text.size() > kMaxPrintfPerWorkload) {
    size_t cut = kMaxPrintfPerWorkload;  // not inside a UTF-8 character
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
    dropped += text.size() - cut;
    text.resize(cut);
  }
  if (!text.empty() || dropped != 0) {
    out["printf_output"] = text;
    out["printf_dropped_bytes"] = dropped;
  }
}

}  // namespace

nlohmann::json WorkloadRunner::run(const tasks::Workload& workload) const {
  nlohmann::json out = {{"workload", workload.name}, {"dims", workload.dims}};
  kiln_sim_clear_report();
  (void)cudaGetLastError();  // nothing from an earlier workload may reach this candidate call
  auto layout = tasks::layout_workload(*task, workload);
  if (!layout) return harness_error(out, layout.error().message);

  const size_t count = layout->tensors.size();
  tasks::HostTensors host(count);
  std::vector<uint64_t> poison;
  DeviceTensors device;
  device.data.assign(count, nullptr);
  for (size_t t = 0; t < count; ++t) {
    const tasks::TensorLayout& tensor = layout->tensors[t];
    const size_t bytes = static_cast<size_t>(tensor.bytes());
    if (cudaError_t e = cudaMalloc(&device.data[t], bytes); e != cudaSuccess)
      return harness_error(out, "allocating " + tensor.name + " (" + std::to_string(bytes) +
                                    " bytes) on the simulated device: " + cuda_error_text(e));
    if (tensor.is_output) {
      // Poisoned so that elements the candidate never writes are counted as such.
      const uint64_t pattern = tasks::PoisonPattern::for_call(tensor.dtype, 0);
      poison.push_back(pattern);
      host[t].resize(bytes);
      tasks::PoisonPattern::fill_host(host[t].data(), tensor.elements(), tensor.dtype, pattern);
    } else {
      host[t] = draw_input(tensor, seed, t);
    }
    if (cudaError_t e = cudaMemcpy(device.data[t], host[t].data(), bytes, cudaMemcpyHostToDevice);
        e != cudaSuccess)
      return harness_error(
          out, "copying " + tensor.name + " to the simulated device: " + cuda_error_text(e));
  }

  cudaStream_t stream = nullptr;
  cudaStreamCreate(&stream);
  const std::vector<kiln_tensor> tensors = layout->abi_tensors(device.data);
  const std::vector<kiln_scalar> scalars = layout->abi_scalars();
  const int status = launch(tensors.data(), static_cast<int>(tensors.size()), scalars.data(),
                            static_cast<int>(scalars.size()), stream);
  const cudaError_t synced = cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  out["kiln_launch_status"] = status;
  attach_report(out);
  if (synced != cudaSuccess || status != KILN_OK) {
    const bool faulted = !out["faults"].empty();
    out["pass"] = false;
    out["status"] = faulted ? "fault" : "launch_error";
    std::string message = "kiln_launch returned " + std::to_string(status);
    if (synced != cudaSuccess) message += "; the stream reports " + cuda_error_text(synced);
    if (!out["diagnostics"].empty()) message += "; " + out["diagnostics"].back().get<std::string>();
    out["message"] = message;
    if (synced != cudaSuccess) {
      cudaDeviceReset();  // a fault breaks the context, as on a GPU; the reset frees everything
      device.data.clear();
    }
    return out;
  }

  for (size_t t = 0; t < count; ++t) {
    const tasks::TensorLayout& tensor = layout->tensors[t];
    std::vector<unsigned char> after(static_cast<size_t>(tensor.bytes()));
    if (cudaError_t e =
            cudaMemcpy(after.data(), device.data[t], after.size(), cudaMemcpyDeviceToHost);
        e != cudaSuccess)
      return harness_error(out, "reading " + tensor.name + " back: " + cuda_error_text(e));
    if (tensor.is_output) {
      host[t] = std::move(after);
    } else if (after != host[t]) {
      out["pass"] = false;
      out["status"] = "wrong_answer";
      out["message"] = "the candidate modified input " + tensor.name + "; inputs are read-only";
      return out;
    }
  }

  const tasks::ReferenceCheck check(reference, task->tolerance);
  tasks::RowPlan full;  // every row: sim workloads are small
  auto errors = check.check(*layout, host, full, poison);
  if (!errors) return harness_error(out, "the CPU reference failed: " + errors.error().message);
  const bool pass = errors->passes(task->tolerance.max_mismatch_fraction);
  out["pass"] = pass;
  out["status"] = pass ? "pass" : "wrong_answer";
  out["errors"] = errors->to_json();
  out["message"] = pass ? "matches the CPU reference within tolerance" : errors->summary();
  return out;
}

}  // namespace kiln::sim::run
