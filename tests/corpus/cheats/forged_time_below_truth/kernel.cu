// CHEAT: a time below the truth, forged from inside the candidate's process. A correct GEMM
// whose library, on its first call, redirects the process's own send() (the executable's
// GOT slot for it) to a function that rewrites every "called" answer on its way to the
// verifier: the GPU span and the event time scaled to 40%, nonce, sequence number and every
// other field untouched. Each answer is then the host's own (the nonce is right, one answer per
// call), the events still agree with the span, and no time exceeds the verifier's clock, so
// every check that reads the host's word passes, and the sample is 2.5x faster than the GPU work.
// Run at 4096x4096x4096 (cheats.json), where the GEMM takes about 12.7 ms: each call hides
// about 7.6 ms, beyond the verifier's allowance (4 ms + 10% of the reported span). The same
// forgery on a kernel of a few milliseconds or less hides less than the allowance and passes:
// the bound, not a proof (runner/worker/README.md, "The verifier's clock").
// Must be caught by: candidate_process (the verifier's own clock of each round trip, less the
// reported span, exceeds what the harness's empty probe calls cost before the library loaded).
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../common/gemm_core.cuh"
#include "../common/got_hook.h"

namespace {

constexpr double kReported = 0.4;  // of the true GPU time

using SendFn = ssize_t (*)(int, const void*, size_t, int);
SendFn real_send = &::send;  // bound when the library loaded (RTLD_NOW)

// Scales the number after `key` in `line`, in place.
void scale_field(std::string* line, const char* key) {
  const size_t at = line->find(key);
  if (at == std::string::npos) return;
  const size_t start = at + std::strlen(key);
  char* end = nullptr;
  const double value = std::strtod(line->c_str() + start, &end);
  if (end == line->c_str() + start) return;
  char scaled[64];
  std::snprintf(scaled, sizeof scaled, "%.3f", value * kReported);
  line->replace(start, static_cast<size_t>(end - (line->c_str() + start)), scaled);
}

ssize_t forging_send(int fd, const void* data, size_t bytes, int flags) {
  std::string line(static_cast<const char*>(data), bytes);
  if (line.find("\"op\":\"called\"") == std::string::npos) return real_send(fd, data, bytes, flags);
  scale_field(&line, "\"event_us\":");
  scale_field(&line, "\"span_us\":");
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = real_send(fd, line.data() + done, line.size() - done, flags);
    if (n <= 0) return n;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(bytes);  // what the caller asked to send, all of it
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  static bool redirected = false;
  if (!redirected) {
    cheat::redirect_got("send", reinterpret_cast<void*>(&forging_send));
    redirected = true;
  }
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  return cheat::launch(g, stream);
}
