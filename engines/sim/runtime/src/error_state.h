// The runtime's error reporting: the per-thread last error (cudaGetLastError), the sticky
// error of a faulted launch, and the names and descriptions of error codes.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace kiln::sim::runtime {

// Records `code` as this thread's last error, keeps `detail` (what was wrong, what to do) for
// the driver, and returns `code`. The caller holds the state's mutex.
cudaError_t fail(cudaError_t code, std::string detail);

// cudaGetLastError and cudaPeekAtLastError: a sticky error is returned and never cleared.
cudaError_t take_last_error();
cudaError_t peek_last_error();

// The sticky error when the context is broken by a faulted launch, else cudaSuccess. Every
// call that touches the device starts with this.
cudaError_t sticky_error();

// "cudaErrorInvalidValue" and "invalid argument"; unknown codes get a generic text.
const char* error_name(cudaError_t code);
const char* error_description(cudaError_t code);

}  // namespace kiln::sim::runtime
