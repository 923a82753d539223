// The device state the harness owns and a candidate must leave as it found it: the persisting-L2
// carve-out (cudaLimitPersistingL2CacheSize) and the lines marked persisting, the device's
// L1/shared cache preference, and the access-policy window of the stream kiln_launch is given.
// A candidate that sets a carve-out and marks an input persisting defeats the cold-L2 flush for
// itself and shrinks the L2 the baseline gets (13% faster for it, 22% slower for cuBLAS on one
// shape, H200 2026-12-01). DeviceState takes the harness's settings once; restore(), after every
// call, puts back whatever differs (and empties the persisting lines) and says what had changed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::worker {

class DeviceState {
 public:
  // The current settings, as the harness set them up (no carve-out expected).
  static Result<DeviceState> capture(cudaStream_t launch_stream);

  // One sentence per setting that differs from the captured one, each already put back.
  std::vector<std::string> restore(cudaStream_t launch_stream) const;

 private:
  size_t persisting_l2_bytes_ = 0;
  cudaFuncCache cache_config_ = cudaFuncCachePreferNone;
};

}  // namespace kiln::worker
