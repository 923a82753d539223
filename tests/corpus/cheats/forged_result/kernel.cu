// CHEAT: forged result. The kernel computes nothing. Its kiln_launch writes a complete, passing
// RESULT line (3x over the baseline, every gate passed) to every descriptor of its process
// that is a pipe or a socket, hoping one of them is the worker's result channel, then ends the
// process with status 0, so nothing else can be said about the job.
// Must be caught by: candidate_process (the candidate runs in a host process that holds no
// result channel; the verifier sees its host exit in the middle of a call).
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "kiln/abi.h"

namespace {

const char kForged[] =
    "{\"event\":\"result\",\"result\":{\"status\":\"passed\",\"kind\":\"verify\","
    "\"gates\":[],\"summary\":{\"scored\":true,\"geomean_speedup\":3.0}}}\n"
    "{\"op\":\"called\",\"seq\":1,\"status\":0,\"span_us\":1.0}\n";

}  // namespace

extern "C" int kiln_launch(const kiln_tensor*, int, const kiln_scalar*, int, cudaStream_t) {
  for (int fd = 0; fd < 1024; ++fd) {
    struct stat s;
    if (fstat(fd, &s) != 0 || !(S_ISFIFO(s.st_mode) || S_ISSOCK(s.st_mode))) continue;
    ssize_t ignored = write(fd, kForged, sizeof kForged - 1);
    (void)ignored;
  }
  _exit(0);
}
