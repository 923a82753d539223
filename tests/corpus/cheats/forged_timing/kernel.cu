// CHEAT: forged timing. A correct GEMM that finishes its work inside kiln_launch, then answers
// for the harness: it writes, on every socket of its process, the reply the candidate host
// would send for this call, claiming 1 us of GPU time, before the host's own reply goes out.
// Must be caught by: candidate_process (every call carries a nonce the forger cannot know
// without reading the host's memory, and a second answer to one call is itself a breach).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "../common/gemm_core.cuh"

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  static int calls = 0;
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  const int status = cheat::launch(g, stream);
  cudaStreamSynchronize(stream);
  ++calls;
  char reply[512];
  const int n = std::snprintf(
      reply, sizeof reply,
      "{\"op\":\"called\",\"seq\":%d,\"nonce\":\"\",\"status\":0,\"cuda_error\":\"\","
      "\"fatal\":false,\"hung\":false,\"event_us\":1.0,\"span_us\":1.0,\"kernels\":1,"
      "\"hidden\":[],\"notes\":[],\"device_state_changes\":[],\"activity\":true,"
      "\"activity_problem\":\"\",\"dropped\":0,\"harness_error\":\"\",\"libraries\":[]}\n",
      calls);
  for (int fd = 3; fd < 1024; ++fd) {
    struct stat s;
    if (fstat(fd, &s) != 0 || !S_ISSOCK(s.st_mode)) continue;
    ssize_t ignored = write(fd, reply, static_cast<size_t>(n));
    (void)ignored;
  }
  return status;
}
