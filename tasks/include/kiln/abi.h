/*
 * kiln/abi.h -- the one interface between kiln and a kernel it runs.
 *
 * A candidate (kernel.cu), a baseline (baseline.cu) and a GPU reference export
 *
 *   extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors,
 *                              const kiln_scalar* scalars, int n_scalars,
 *                              cudaStream_t stream);
 *
 * and the CPU reference (reference.cpp) exports
 *
 *   extern "C" int kiln_reference(const kiln_tensor* tensors, int n_tensors,
 *                                 const kiln_scalar* scalars, int n_scalars);
 *
 * with host pointers. Tensors arrive in the order of the task's signature
 * (inputs, then outputs); scalars likewise. Both return KILN_OK (0) on success
 * and a nonzero kiln_status otherwise. All work must be enqueued on `stream`.
 *
 * This header is plain C so it can be included from .cu, .cpp and C alike.
 */
#ifndef KILN_ABI_H
#define KILN_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KILN_ABI_VERSION 1
#define KILN_MAX_RANK 8

typedef enum kiln_dtype {
  KILN_F16 = 0,
  KILN_BF16 = 1,
  KILN_F32 = 2,
  KILN_F64 = 3,
  KILN_E4M3 = 4,
  KILN_E5M2 = 5,
  KILN_I8 = 6,
  KILN_U8 = 7,
  KILN_I32 = 8,
  KILN_I64 = 9
} kiln_dtype;

typedef enum kiln_status {
  KILN_OK = 0,
  KILN_ERR_BAD_ARGUMENT = 1, /* wrong count, dtype, rank or shape */
  KILN_ERR_UNSUPPORTED = 2,  /* a shape or layout this kernel does not handle */
  KILN_ERR_LAUNCH = 3        /* a CUDA call failed */
} kiln_status;

typedef struct kiln_tensor {
  void* data; /* device pointer (host pointer for kiln_reference) */
  kiln_dtype dtype;
  int32_t rank;
  int64_t shape[KILN_MAX_RANK];
  int64_t strides[KILN_MAX_RANK]; /* in elements, not bytes */
  const char* name;               /* as in the task's signature */
} kiln_tensor;

typedef struct kiln_scalar {
  const char* name;
  kiln_dtype dtype; /* KILN_I64 or KILN_F64 */
  union {
    int64_t i;
    double f;
  } value;
} kiln_scalar;

/* The same typedef as the CUDA runtime's; repeating an identical typedef is
 * allowed in C11 and C++, so this header and cuda_runtime.h mix freely. */
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;

typedef int (*kiln_launch_fn)(const kiln_tensor* tensors, int n_tensors, const kiln_scalar* scalars,
                              int n_scalars, cudaStream_t stream);
typedef int (*kiln_reference_fn)(const kiln_tensor* tensors, int n_tensors,
                                 const kiln_scalar* scalars, int n_scalars);

#ifdef __cplusplus
}
#endif

#endif /* KILN_ABI_H */
