// CHEAT: "done" said before the work is. A correct GEMM whose library, on its first call,
// redirects the process's own recv() and send() (the executable's GOT slots for them). recv
// tells it which calls are timed ("timed":true in the request). In a timed call kiln_launch
// enqueues only the first quarter of the rows on the launch stream and keeps the rest back;
// when the host sends its interim `ran` (its device-wide synchronize has returned, so the
// quarter is all the GPU did in the window), the hooked send lets it go out and then launches
// the other three quarters on a private stream, and it empties the "hidden" findings of every
// later answer, where the host's activity record would name that work. The host's span is a
// quarter of the truth, and the rest of the GEMM runs while the verifier reads the answer and
// times its baseline: if the verifier's clock stopped at `ran` and it compared the outputs only
// later, the sample would be 4x faster than the work, and correct. Untimed calls (the verify
// pass) wait for the rest before the host's final answer, so every check there passes.
// Run at 4096x4096x4096 (cheats.json), where the GEMM takes about 12.7 ms, so the withheld work
// (about 9.5 ms) is far beyond the round trip's allowance (4 ms + 10% of the reported span).
// Must be caught by: poisoned_outputs (the verifier copies the outputs at `ran` into buffers the
// host cannot reach and compares that copy: rows the withheld work had not written yet still
// hold the harness's poison; correctness if they were half written) or, if the withheld work
// has the GPU until it is done, candidate_process (the copy then finishes only after it, on the
// verifier's clock).
#include <sys/socket.h>

#include <string>

#include "../common/gemm_core.cuh"
#include "../common/got_hook.h"

namespace {

using SendFn = ssize_t (*)(int, const void*, size_t, int);
using RecvFn = ssize_t (*)(int, void*, size_t, int);
SendFn real_send = &::send;  // bound when the library loaded (RTLD_NOW)
RecvFn real_recv = &::recv;

bool timed_call = false;  // the last call request asked for a timed call
bool tail_pending = false;
cheat::Gemm tail;  // the rows kiln_launch kept back
cudaStream_t private_stream = nullptr;

// Empties the array after "hidden": in `line`, in place (strings inside may hold brackets).
void empty_hidden(std::string* line) {
  const std::string key = "\"hidden\":[";
  const size_t at = line->find(key);
  if (at == std::string::npos) return;
  const size_t open = at + key.size();
  size_t i = open;
  bool in_string = false;
  for (int depth = 1; i < line->size() && depth > 0; ++i) {
    const char c = (*line)[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[') {
      ++depth;
    } else if (c == ']') {
      --depth;
    }
  }
  line->erase(open, i - 1 - open);
}

ssize_t send_all(int fd, const std::string& line, int flags) {
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = real_send(fd, line.data() + done, line.size() - done, flags);
    if (n <= 0) return n;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

ssize_t early_send(int fd, const void* data, size_t bytes, int flags) {
  std::string line(static_cast<const char*>(data), bytes);
  if (line.find("\"op\":\"ran\"") != std::string::npos) {
    const ssize_t sent = real_send(fd, data, bytes, flags);
    if (tail_pending) {
      if (private_stream == nullptr)
        cudaStreamCreateWithFlags(&private_stream, cudaStreamNonBlocking);
      cheat::launch(tail, private_stream);
      tail_pending = false;
    }
    return sent;
  }
  if (line.find("\"op\":\"called\"") == std::string::npos &&
      line.find("\"op\":\"after_calls\"") == std::string::npos)
    return real_send(fd, data, bytes, flags);
  if (!timed_call && private_stream != nullptr) cudaStreamSynchronize(private_stream);
  empty_hidden(&line);
  const ssize_t n = send_all(fd, line, flags);
  return n <= 0 ? n : static_cast<ssize_t>(bytes);  // what the caller asked to send, all of it
}

ssize_t watching_recv(int fd, void* data, size_t bytes, int flags) {
  const ssize_t n = real_recv(fd, data, bytes, flags);
  if (n > 0) {
    const std::string chunk(static_cast<const char*>(data), static_cast<size_t>(n));
    if (chunk.find("\"op\":\"call\"") != std::string::npos)
      timed_call = chunk.find("\"timed\":true") != std::string::npos;
  }
  return n;
}

}  // namespace

extern "C" int kiln_launch(const kiln_tensor* tensors, int n_tensors, const kiln_scalar*, int,
                           cudaStream_t stream) {
  static bool redirected = false;
  if (!redirected) {
    cheat::redirect_got("send", reinterpret_cast<void*>(&early_send));
    cheat::redirect_got("recv", reinterpret_cast<void*>(&watching_recv));
    redirected = true;
  }
  cheat::Gemm g;
  if (!cheat::parse(tensors, n_tensors, &g)) return KILN_ERR_BAD_ARGUMENT;
  // The first call's request was read before the hook was in place: it runs whole.
  const int64_t head = timed_call ? g.M / 4 : g.M;
  cheat::Gemm first = g;
  first.M = head;  // a grid of these rows only: the rest is not computed in the window at all
  const int status = cheat::launch(first, stream);
  if (head < g.M) {
    tail = g;
    tail.a = g.a + head * g.K;
    tail.c = g.c + head * g.N;
    tail.M = g.M - head;
    tail_pending = true;
  }
  return status;
}
