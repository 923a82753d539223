// SABOTEUR: GPU heater. A correct GEMM followed, on the given stream, by 20 ms of dense FMA work
// on every SM, so the GPU runs hot and near its power limit when the baseline's sample comes
// next. Everything is on the given stream and charged to the candidate; no gate fails.
// Expected: the candidate is slow; the baseline's medians match a job with an honest candidate
// (NVML's throttle reasons discard samples the heat slowed).
#include "../../../tests/corpus/cheats/common/gemm_core.cuh"

namespace {

__global__ void heat(float* sink, long long cycles) {
  float a = threadIdx.x * 1e-3f;
  float b = 1.0001f;
  const long long start = clock64();
  while (clock64() - start < cycles) {
    for (int i = 0; i < 64; ++i) a = fmaf(a, b, 1e-7f);
  }
  if (a == 12345.0f) sink[threadIdx.x] = a;  // never true; keeps the loop
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  const int status = cheat::launch(g, stream);
  heat<<<132 * 4, 512, 0, stream>>>(nullptr, 20LL * 1980 * 1000);  // ~20 ms at 1.98 GHz
  return cudaGetLastError() == cudaSuccess ? status : KILN_ERR_LAUNCH;
}
