// KILN_HD marks the small numeric helpers that the harness kernels (nvcc) and the
// host-side checks and unit tests (g++) must compute identically.
#pragma once

#if defined(__CUDACC__)
#define KILN_HD __host__ __device__
#else
#define KILN_HD
#endif
