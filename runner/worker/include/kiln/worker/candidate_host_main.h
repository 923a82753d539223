// `kiln-worker --candidate-host SOCKET`: the candidate host, the process that loads the
// candidate's library and runs its calls for the verifier that started it
// (runner/worker/src/gpu/candidate_host.h has the verifier's side, candidate_host_protocol.h
// the messages). In order: connect to SOCKET; take the load request; start CUPTI, the GPU and
// the host's own harness (streams, L2 flush, launch gate); confine the process
// (kiln/base/confine.h); load the candidate, putting back what its load-time code changed;
// then answer calls until told to exit or the verifier goes away.
#pragma once

#include <filesystem>

namespace kiln::worker {

// The process's exit code: 0 after an exit request or when the verifier closed the channel,
// 3 when the host could not start.
int serve_candidate_host(const std::filesystem::path& socket);

}  // namespace kiln::worker
