// The files `kiln task new` writes for a new task (the generic example: y = alpha * x in f32).
// NAME in them is replaced by the task's name.
#pragma once

namespace kiln::taskcheck::templates {

// clang-format off: these are files, kept as they are written out.

inline constexpr const char* kReference =
    R"TXT(// The CPU reference of task NAME: the exact answer the harness compares every candidate with.
// Plain C++ (kiln builds it with g++ -std=c++20 -O3), host pointers, the ABI of kiln/abi.h:
// tensors in the order of task.json's signature (inputs, then outputs), scalars likewise.
// Replace the computation below with yours; compute in double where it matters, and round to
// the output's dtype once.
#include <stdint.h>

#include "kiln/abi.h"

extern "C" int kiln_reference(const kiln_tensor* tensors, int n_tensors,
                              const kiln_scalar* scalars, int n_scalars) {
  if (n_tensors != 2 || n_scalars != 1) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];
  const kiln_tensor& y = tensors[1];
  if (x.dtype != KILN_F32 || y.dtype != KILN_F32 || x.rank != 1 || y.rank != 1 ||
      x.shape[0] != y.shape[0])
    return KILN_ERR_BAD_ARGUMENT;
  const double alpha = scalars[0].value.f;
  const float* in = static_cast<const float*>(x.data);
  float* out = static_cast<float*>(y.data);
  for (int64_t i = 0; i < x.shape[0]; ++i)
    out[i * y.strides[0]] = static_cast<float>(alpha * static_cast<double>(in[i * x.strides[0]]));
  return KILN_OK;
}
)TXT";

// The starter and the baseline share this kernel; the baseline launches one thread per
// element, the starter a capped grid that strides.
inline constexpr const char* kKernelHead = R"CUDA(#include <cuda_runtime.h>
#include <stdint.h>

#include "kiln/abi.h"

__global__ void NAME_scale(const float* x, float* y, int64_t n, float alpha) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    y[i] = alpha * x[i];
}

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                           int n_scalars, cudaStream_t stream) {
  if (n_tensors != 2 || n_scalars != 1) return KILN_ERR_BAD_ARGUMENT;
  const kiln_tensor& x = tensors[0];
  const kiln_tensor& y = tensors[1];
  if (x.dtype != KILN_F32 || y.dtype != KILN_F32 || x.rank != 1 || y.rank != 1 ||
      x.shape[0] != y.shape[0])
    return KILN_ERR_BAD_ARGUMENT;
  if (x.strides[0] != 1 || y.strides[0] != 1) return KILN_ERR_UNSUPPORTED;
  const int64_t n = x.shape[0];
  const int threads = 256;
)CUDA";

inline constexpr const char* kStarterTail = R"CUDA(  int64_t blocks = (n + threads - 1) / threads;
  if (blocks > 4096) blocks = 4096;  // the loop strides over the rest
  NAME_scale<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      static_cast<const float*>(x.data), static_cast<float*>(y.data), n,
      static_cast<float>(scalars[0].value.f));
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
)CUDA";

inline constexpr const char* kBaselineTail =
    R"CUDA(  const int64_t blocks = (n + threads - 1) / threads;  // one thread per element
  NAME_scale<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      static_cast<const float*>(x.data), static_cast<float*>(y.data), n,
      static_cast<float>(scalars[0].value.f));
  return cudaGetLastError() == cudaSuccess ? KILN_OK : KILN_ERR_LAUNCH;
}
)CUDA";

inline constexpr const char* kReadme = R"MD(# NAME

TODO: say in a paragraph what the kernel computes, for the agent that will optimize it (this
file goes into its PROMPT.md): the formula, the layouts of the tensors, the precision it must
keep, what is allowed and what is not. Then delete every TODO line of this file and of
task.json: `kiln task check` refuses a bundle that still has one.

This bundle was made by `kiln task new` as a working example, y = alpha * x in f32, so that
every tool runs on it before you change anything. Replace the computation in all four code
files and in task.json, then run `kiln task check DIR` until it says PASSED.

<!-- The notes below are for you, the task's author; delete them when the task is written. -->

## The files

| file | what to put there |
| --- | --- |
| `task.json` | the contract: signature, input distributions, workloads, tolerance, baseline |
| `reference.cpp` | the exact answer on the CPU: `kiln_reference(...)`, host pointers |
| `baseline.cu` | the speed to beat (a vendor library or your best kernel): `kiln_launch(...)` |
| `starter.cu` | a correct, simple kernel the agent starts from: `kiln_launch(...)` |
| `README.md` | this file: the contract in prose |

## task.json, field by field

- `name`: the folder's name, `[a-z0-9_]+`.
- `title`, `description`: one line, and a paragraph (both shown to the agent).
- `arch`: the GPU architecture every kernel is built for (`sm_90a` for H100/H200).
- `dims`: the names of the problem's sizes; every shape and size is an expression over them.
- `signature.inputs`, `signature.outputs`: the tensors, in the order `kiln_launch` receives
  them (inputs first). Each has `name`, `dtype` (f16 bf16 f32 f64 e4m3 e5m2 i8 u8 i32 i64) and
  `shape` (1 to 8 expressions such as `"M"`, `"2*N"`, `"(K+127)/128"`, or integers).
- `signature.scalars`: `name`, `dtype` (i64 or f64) and `value` (an expression, or a number for
  f64); they reach `kiln_launch` in this order.
- `input_distribution`: for every input, `{"kind": "uniform", "low": L, "high": H}`; values are
  drawn fresh for every job from a seed the candidate never sees.
- `workloads`: the timed, scored sizes: a unique `name` and a positive integer for every dim.
- `sim_workloads`: small sizes for the CPU simulator (a few thousand elements: each takes
  seconds there); `simulate` and `kiln task check` run them.
- `tolerance`: an element passes when `|out - ref| <= atol + rtol * |ref|` (NaN and infinity
  must match exactly); a workload passes when at most `max_mismatch_fraction` of its elements
  fail. Choose them from the error of a correct kernel, and keep them tight enough that the
  wrong candidates `kiln task check` writes are refused.
- `flops`, `bytes`: expressions for the useful arithmetic and the minimum bytes moved (reports
  show TFLOP/s, GB/s and % of peak).
- `baseline`: `name` (in reports), `file` (= `files.baseline`), `libraries` (link names:
  `cublas` for `-lcublas`).
- `banned_symbols`: symbol prefixes a candidate may not define or call (`cublas`, `cutlass`).
- `rules`: sentences for the agent; the harness enforces what it can.
- `allow_host_sync` (optional, default false): whether `kiln_launch` may wait for the GPU.
- `max_cv` (optional, default 0.05): the timing noise the task accepts, a fraction above 0 and
  at most 0.5. `kiln task check` fails its gpu_stability step when a workload's median is not
  pinned within it (95% interval) or its medians over repeated benchmarks vary by more (CV);
  raise it for tiny, noisy workloads, and `kiln task check --max-cv` overrides it.
- `files`: the file names above (and optionally `gpu_reference`, an exact reference on the
  GPU).

tasks/FORMAT.md in kiln's source is the full reference: every check the loader makes, the ABI,
the task hash, and what `kiln task check` runs.
)MD";

// clang-format on

}  // namespace kiln::taskcheck::templates
