#include "cuda_status.h"

namespace kiln::worker {

std::string describe_cuda(cudaError_t error, const std::string& what) {
  return what + ": " + cudaGetErrorString(error) + " (" + cudaGetErrorName(error) + ")";
}

Status cuda_ok(cudaError_t error, const std::string& what) {
  if (error == cudaSuccess) return Ok{};
  return make_error(describe_cuda(error, what));
}

bool is_sticky(cudaError_t error) {
  switch (error) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

}  // namespace kiln::worker
