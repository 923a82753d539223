// The messages between kiln-worker (the verifier: it holds the hidden seed, the references,
// the gate ledger and the result channel, and never loads candidate code) and its candidate
// host (a child process, confined before it loads the candidate's library, that runs the
// candidate's calls on buffers the verifier shares with it through CUDA IPC). One JSON
// object per line (message_channel.h); every request carries a sequence number its answer
// repeats, so a duplicated, late or unexpected answer is told from the right one.
//
//   verifier -> host                         host -> verifier
//   prepare {task_dir, library, gpu, ...}    prepared {harness_error, activity, confinement}
//   call {probe: true, timed}  (K times)     ran {seq}, then called {a CallReply}
//   load                                     loaded {ok, error, load_changes, libraries}
//   share {buffers: [{id, handle, offset}]}  shared
//   release {ids}                            released
//   call {workload, buffers, timed}          ran {seq}, then called {a CallReply}
//   after_calls                              after_calls {hidden}
//   exit                                     (the host exits)
//
// Every call has two answers: `ran` as soon as the device-wide synchronize after kiln_launch
// returned (the call's GPU work is done), then `called` with what the host found. At `ran` the
// verifier seals a timed call's outputs (copies them into buffers no host can reach, which its
// comparison then reads) and then stops its clock of the round trip, so the host's work after
// the GPU's (CUPTI's flush, the device settings put back, the findings) is not charged to the
// call, and work a host leaves running past an early `ran` is either on the clock or missing
// from what is compared (runner/worker/README.md, "The verifier's clock").
//
// Between prepare and load the host is the harness's alone (set up and confined, the
// candidate's library not yet opened): probe calls then run the whole call window around the
// harness's empty launch, and what the verifier's clock measures of them is the window's own
// cost, the yardstick its clock holds the candidate's reported times to later
// (timing_consistency.h, judge_round_trip).
//
// Everything the host sends is what the candidate may have written: the verifier decides
// correctness from the buffers alone, bounds the reported times by its own clock, and treats
// any answer these parsers refuse as the candidate_process gate's failure.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::worker::host {

namespace op {
inline constexpr const char* kPrepare = "prepare";
inline constexpr const char* kPrepared = "prepared";
inline constexpr const char* kLoad = "load";
inline constexpr const char* kLoaded = "loaded";
inline constexpr const char* kShare = "share";
inline constexpr const char* kShared = "shared";
inline constexpr const char* kRelease = "release";
inline constexpr const char* kReleased = "released";
inline constexpr const char* kCall = "call";
inline constexpr const char* kRan = "ran";
inline constexpr const char* kCalled = "called";
inline constexpr const char* kAfterCalls = "after_calls";
inline constexpr const char* kExit = "exit";
}  // namespace op

// What the host needs to run the candidate: no seed, no job file, no references.
struct LoadRequest {
  std::filesystem::path task_dir;   // the layouts of the workloads (tasks::layout_workload)
  std::filesystem::path library;    // the candidate's built shared object
  std::filesystem::path cuda_root;  // the toolkit the library links (kept readable)
  int gpu = 0;
  double hang_timeout_seconds = 60;             // one call's bound inside the host
  std::vector<std::filesystem::path> readable;  // besides the system's: what confinement keeps
  nlohmann::json to_json() const;
  static Result<LoadRequest> from_json(const nlohmann::json& message);
};

struct LoadReply {
  bool ok = false;
  std::string error;                      // why the candidate did not load (its failure)
  std::string harness_error;              // why the host could not start (not the candidate's)
  std::vector<std::string> load_changes;  // what the library's load-time code changed (put back)
  bool activity = false;                  // CUPTI records in the host
  std::string activity_note;              // why not
  nlohmann::json confinement;             // what the host is confined by (shown in the result)
  std::vector<std::string> libraries;     // shared objects loaded in the host (file names)
  // The same fields answer prepare (op "prepared": the set-up's) and load ("loaded": the
  // library's); the verifier merges the two.
  nlohmann::json to_json(const char* op_name = op::kLoaded) const;
  static Result<LoadReply> from_json(const nlohmann::json& message,
                                     const char* op_name = op::kLoaded);
};

// One device allocation of the verifier's, opened by the host: `handle` is the
// cudaIpcMemHandle_t's bytes in hex; the tensor's data starts `offset` bytes in.
struct SharedBuffer {
  int64_t id = 0;
  std::string handle;
  int64_t offset = 0;
  int64_t bytes = 0;
};

struct ShareRequest {
  std::vector<SharedBuffer> buffers;
  nlohmann::json to_json() const;
  static Result<ShareRequest> from_json(const nlohmann::json& message);
};

struct CallRequest {
  int64_t seq = 0;
  std::string nonce;             // random per call; the answer must repeat it (no blind forgery)
  std::string workload;          // a workload of the task, by name
  std::vector<int64_t> buffers;  // per tensor of the layout, the shared buffer id (-1: none)
  bool timed = false;            // flush L2 first and hold the launch stream (launch_gate.h)
  // Before load only: the harness's empty launch in place of kiln_launch, no workload and no
  // buffers (the window's own cost on the verifier's clock).
  bool probe = false;
  nlohmann::json to_json() const;
  static Result<CallRequest> from_json(const nlohmann::json& message);
};

// What the host saw of one call. All of it is the candidate's word except what the verifier
// checks itself (the buffers), so the verifier bounds it (times within its own clock).
struct CallReply {
  int64_t seq = 0;
  std::string nonce;
  int status = 0;                       // kiln_launch's return value
  std::string cuda_error;               // a CUDA error during or after the call
  bool fatal = false;                   // the host's context is unusable
  bool hung = false;                    // did not finish within the hang timeout
  double event_us = 0;                  // CUDA events around the call
  double span_us = 0;                   // CUPTI: first GPU start to last GPU end in the window
  double tail_us = 0;                   // gated: the stop event to the tail probe's end
  int kernels = 0;                      // kernels CUPTI saw in the window
  std::vector<std::string> hidden;      // hidden_stream_work findings
  std::vector<std::string> notes;       // charged and reported
  std::vector<std::string> host_syncs;  // synchronize calls inside kiln_launch
  bool waited = false;                  // the launch gate saw kiln_launch wait for the GPU
  std::vector<std::string> device_state_changes;  // harness_state (put back)
  bool activity = false;                          // CUPTI recorded this call
  std::string activity_problem;        // the harness's own markers were missing: CUPTI was stopped
  uint64_t dropped = 0;                // records CUPTI dropped so far
  std::vector<std::string> libraries;  // shared objects loaded since the last answer
  bool memory = false;                 // CUPTI records the host's device allocations
  std::string memory_leak;             // device_memory: memory kept call after call
  int64_t outstanding_bytes = 0;       // the candidate's allocations minus releases so far
  std::string harness_error;           // the host itself failed
  nlohmann::json to_json() const;
  static Result<CallReply> from_json(const nlohmann::json& message);
};

// The "shared" answer's error: empty when every buffer opened.
Result<std::string> share_error(const nlohmann::json& message);
// The "after_calls" answer's findings: work the host saw after every call had returned.
Result<std::vector<std::string>> after_calls_findings(const nlohmann::json& message);

// The hex of `bytes` bytes at `data`, and back (false on a malformed string or length).
std::string to_hex(const void* data, size_t bytes);
bool from_hex(const std::string& hex, void* data, size_t bytes);

}  // namespace kiln::worker::host
