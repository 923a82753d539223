#include "kiln/worker/run_once.h"

#include <cuda_runtime_api.h>

#include <iostream>

#include "cuda_status.h"
#include "job_builds.h"
#include "kiln/compiler/kernel_build.h"
#include "kiln/tasks/hash_mix.h"
#include "kiln/tasks/numeric_codec.h"
#include "kiln/tasks/poison_pattern.h"
#include "kiln/tasks/task.h"
#include "kiln/tasks/tensor_layout.h"
#include "kiln/worker/dynamic_library.h"

namespace kiln::worker {

int run_once(const JobSpec& spec, const WorkerOptions& options, const RunOnceOptions& once) {
  auto fail = [](const std::string& message) {
    std::cerr << "kiln-worker --run-once: " << message << "\n";
    return 3;
  };
  auto task = tasks::load_task(spec.task_dir);
  if (!task) return fail(task.error().message);
  auto workload = tasks::find_workload(*task, once.workload);
  if (!workload) return fail(workload.error().message);
  auto layout = tasks::layout_workload(*task, *workload);
  if (!layout) return fail(layout.error().message);

  const compiler::KernelBuild builder(options.toolchain);
  const compiler::BuildOutcome build =
      builder.build(once.target == "baseline" ? baseline_build_request(builder, spec, *task)
                                              : candidate_build_request(spec, *task));
  if (!build.ok) return fail(build.error);
  auto library = DynamicLibrary::open(build.library);
  if (!library) return fail(library.error().message);
  auto launch = library->symbol("kiln_launch");
  if (!launch) return fail(launch.error().message);
  const auto fn = reinterpret_cast<kiln_launch_fn>(*launch);

  if (auto s = cuda_ok(cudaSetDevice(options.gpu), "cudaSetDevice"); !s)
    return fail(s.error().message);
  cudaStream_t stream = nullptr;
  if (auto s =
          cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
      !s) {
    return fail(s.error().message);
  }
  std::vector<void*> pointers;
  for (size_t t = 0; t < layout->tensors.size(); ++t) {
    const tasks::TensorLayout& tensor = layout->tensors[t];
    void* device = nullptr;
    if (auto s = cuda_ok(cudaMalloc(&device, static_cast<size_t>(tensor.bytes())),
                         "cudaMalloc " + tensor.name);
        !s) {
      return fail(s.error().message);
    }
    std::vector<unsigned char> host(static_cast<size_t>(tensor.bytes()));
    const int size = tasks::dtype_size(tensor.dtype);
    if (tensor.is_output) {
      tasks::PoisonPattern::fill_host(host.data(), tensor.elements(), tensor.dtype,
                                      tasks::PoisonPattern::bits(tensor.dtype, 0));
    } else if (!tensor.fixed_bytes.empty()) {
      host = tensor.fixed_bytes;  // fixed by the dims (a group_index)
    } else {
      const uint64_t key = tasks::stream_key(spec.seed, 0x6f6e6365ull /* "once" */, t, 0);
      for (int64_t i = 0; i < tensor.elements(); ++i) {
        const double u = tasks::unit_draw(key, static_cast<uint64_t>(i));
        const uint64_t bits = tasks::encode(
            tensor.dtype,
            tensor.distribution.low + (tensor.distribution.high - tensor.distribution.low) * u);
        std::memcpy(host.data() + i * size, &bits, static_cast<size_t>(size));
      }
    }
    if (auto s = cuda_ok(cudaMemcpy(device, host.data(), host.size(), cudaMemcpyHostToDevice),
                         "upload " + tensor.name);
        !s) {
      return fail(s.error().message);
    }
    pointers.push_back(device);
  }
  std::vector<kiln_tensor> tensors = layout->abi_tensors(pointers);
  std::vector<kiln_scalar> scalars = layout->abi_scalars();
  for (int c = 0; c < once.calls; ++c) {
    const int status = fn(tensors.data(), static_cast<int>(tensors.size()), scalars.data(),
                          static_cast<int>(scalars.size()), stream);
    if (status != KILN_OK) return fail("kiln_launch returned " + std::to_string(status));
    if (auto s = cuda_ok(cudaGetLastError(), "launch"); !s) return fail(s.error().message);
    if (auto s = cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); !s)
      return fail(s.error().message);
  }
  std::cerr << "kiln-worker --run-once: " << once.target << " ran " << once.calls << " time(s) on "
            << layout->workload << "\n";
  return 0;
}

}  // namespace kiln::worker
