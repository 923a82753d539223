// The verifier's handle on its candidate host: the child process that loads the candidate's
// library and runs its calls, so that no candidate code ever runs in the process that holds
// the hidden seed, the references, the gate ledger and the result channel
// (candidate_host_protocol.h has the messages, README.md the threat model).
//
// The host is kiln-worker itself, started as `kiln-worker --candidate-host SOCKET` through the
// one process supervisor (kiln/base/process.h), in its own process group, killed with it when
// the verifier leaves or gives up on it. The verifier shares each tensor's device allocation
// with it through CUDA IPC, and checks everything about a call it can see itself: inputs
// unchanged, outputs written, guard bands, the answer's values. What only the host can see (the
// call's GPU time, its CUDA errors, work on other streams, device settings) comes back in its
// reply, bounded: a time beyond the verifier's own clock for the round trip, an answer that
// does not parse, or a host that died, hung or spoke out of turn fails the candidate_process
// gate.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "checked_call.h"
#include "kiln/base/result.h"
#include "kiln/worker/candidate_host_protocol.h"
#include "kiln/worker/host_conversation.h"
#include "workload_buffers.h"

namespace kiln::worker {

class CandidateHost {
 public:
  struct Options {
    std::filesystem::path executable;  // kiln-worker
    host::LoadRequest load;
    std::chrono::seconds start_timeout{120};  // the host's CUDA start and the library's load
    // Timed probe calls between the host's set-up and the load (benchmark jobs): the window's
    // own cost on the verifier's clock, before any candidate code runs (probe_overhead_us).
    int probes = 0;
  };

  // Starts the host, probes its call window and has it load the candidate. The reply says
  // whether the library loaded and what its load-time code changed; an error is the
  // harness's (the host did not start, or a probe failed).
  static Result<std::unique_ptr<CandidateHost>> start(const Options& options,
                                                      host::LoadReply* reply);
  ~CandidateHost();
  CandidateHost(const CandidateHost&) = delete;
  CandidateHost& operator=(const CandidateHost&) = delete;

  // One candidate call: the window runs in the host on `inputs` and `outputs` (shared first
  // where new). Fills what run_call_window would; report->integrity_error when the host broke
  // the protocol or died (the host is then unusable: broken()). `at_ran`, when set, runs as the
  // host's interim answer arrives (the call's GPU work done, by the host's word) and before the
  // verifier's clock of the round trip stops: the completion seal (workload_session.h) copies
  // the outputs there, so what it costs is on the clock.
  void call(const tasks::WorkloadLayout& layout, const TensorSet& inputs, const TensorSet& outputs,
            bool timed, const std::function<void()>& at_ran, CallReport* report);
  // Stray work and other threads' CUDA calls the host saw after every call had returned.
  Result<std::vector<std::string>> work_after_calls();
  // Forgets every shared buffer (the host closes its mappings) before the verifier frees them.
  void release_all();

  bool broken() const { return conversation_.broken(); }
  const std::string& broken_reason() const { return conversation_.broken_reason(); }
  // Records the host's CUPTI dropped so far (its last reply's count).
  uint64_t dropped() const { return dropped_; }
  // Per probe: the verifier's clock of the round trip less the GPU span the host reported,
  // measured before the candidate's library was opened (empty without probes).
  const std::vector<double>& probe_overhead_us() const { return probe_overhead_us_; }

 private:
  CandidateHost() = default;
  Result<int64_t> share(const GuardedBuffer& buffer);
  // One call's round trip (a probe's or the candidate's): the reply, parsed and held to the
  // request (nonce, times within *wall_us, the verifier's clock of it, which runs until
  // `at_ran` has returned); an error otherwise.
  Result<host::CallReply> exchange_call(const host::CallRequest& request,
                                        const std::function<void()>& at_ran,
                                        std::chrono::milliseconds timeout, double* wall_us);
  // One probe call: its round trip less its span.
  Status probe(double* overhead_us);
  // Breaks the conversation and stops the host (it is not used again).
  const std::string& mark_broken(const std::string& why);
  // How the host process ended, or "" while it runs.
  std::string end_description() const;

  HostConversation conversation_;
  std::filesystem::path socket_dir_;
  std::thread supervisor_;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> exited_{false};
  mutable std::mutex exit_mutex_;  // guards exit_description_
  std::string exit_description_;   // how the host ended, once it has (written by supervisor_)
  std::map<const void*, int64_t> shared_;  // allocation base -> id
  int64_t next_id_ = 1;
  int64_t next_seq_ = 1;
  double hang_timeout_seconds_ = 60;
  uint64_t dropped_ = 0;
  std::vector<double> probe_overhead_us_;
};

}  // namespace kiln::worker
