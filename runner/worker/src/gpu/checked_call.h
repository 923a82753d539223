// One call of a kernel's kiln_launch with the per-call gates around it, in three parts:
//   before (prepare_call): input checksums, outputs poisoned (the pattern of this call),
//           everything on the harness stream finished;
//   window (run_call_window): L2 flushed when timed; [open, close] in CUPTI time, CUDA
//           events around the call on its stream, closed only after a device-wide
//           synchronize (bounded by a hang timeout); CUDA errors, the device settings put
//           back, the CUPTI records of the window (sample span, streams, threads);
//   after (finish_call): input checksums again, guard bands of every tensor touched.
// The verifier runs all three for the baseline (run_checked_call). For the candidate it runs
// the before and after parts on its own buffers, flushes L2 itself before a timed call
// (settle_harness), and the candidate host runs the window in its process, without a flush of
// its own, on the same buffers opened through CUDA IPC (candidate_host.h).
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "activity_recorder.h"
#include "device_state.h"
#include "kiln/abi.h"
#include "kiln/tasks/tensor_layout.h"
#include "kiln/worker/activity_analysis.h"
#include "l2_flush.h"
#include "launch_gate.h"
#include "workload_buffers.h"

namespace kiln::worker {

struct CallEnvironment {
  cudaStream_t launch_stream = nullptr;   // given to kiln_launch
  cudaStream_t harness_stream = nullptr;  // the harness's own work
  ActivityRecorder* recorder = nullptr;   // null: no CUPTI (run-once mode)
  ActivityContext activity;
  L2Flush* flush = nullptr;
  LaunchGate* gate = nullptr;  // holds the launch stream during timed calls (launch_gate.h)
  const DeviceState* device_state = nullptr;  // checked and put back after every call
  HarnessScratch* scratch = nullptr;
  uint64_t guard_seed = 0;
  double hang_timeout_seconds = 60;
  // Told as soon as the device-wide synchronize after kiln_launch returned (the candidate
  // host's interim answer, candidate_host_protocol.h); may be empty.
  std::function<void()> gpu_done;
};

struct CallReport {
  std::string owner;
  int status = KILN_OK;    // kiln_launch's return value
  std::string cuda_error;  // a CUDA error during or after the call
  bool fatal = false;      // the context is unusable: stop the job
  bool hung = false;       // did not finish within the hang timeout
  double event_us = 0;     // CUDA events around the call
  double span_us = 0;      // CUPTI: first GPU start to last GPU end in the window
  double tail_us = 0;      // gated: the stop event to the tail probe's end (launch_gate.h)
  WindowFindings findings;
  CallWindow window;
  std::vector<std::string> changed_inputs;  // names of inputs whose checksum changed
  // Inputs that already differed from what the harness drew when the call began (written
  // between calls); filled by the workload session.
  std::vector<std::string> changed_before_call;
  std::vector<std::string> guard_damage;          // one sentence per damaged tensor
  std::vector<std::string> device_state_changes;  // settings the call changed (put back)
  std::vector<ActivityRecord> records;            // everything drained after the call
  // The harness's own activity markers were missing from the window's records: something
  // stopped CUPTI during the call (activity_record gate).
  std::string activity_problem;
  bool remote = false;    // the window ran in the candidate host (records stay there)
  bool activity = false;  // CUPTI recorded the window (hidden_stream_work can be judged)
  double wall_us = 0;     // remote: the verifier's clock around the host's round trip
  std::vector<std::string> libraries;  // remote: objects the host loaded during the call
  bool waited_in_call = false;         // the launch gate's hold timed out: kiln_launch waited
  bool memory_recorded = false;        // remote: the host counts the candidate's allocations
  std::string memory_leak;             // remote: device_memory's finding
  // The candidate host died, hung or broke the protocol (candidate_process gate).
  std::string integrity_error;
  std::string harness_error;  // the harness itself failed (not the kernel's fault)

  bool clean() const {
    return status == KILN_OK && cuda_error.empty() && !hung && changed_inputs.empty() &&
           guard_damage.empty() && findings.violations.empty() && harness_error.empty() &&
           device_state_changes.empty() && integrity_error.empty() && changed_before_call.empty();
  }
};

struct CallRequest {
  kiln_launch_fn launch = nullptr;
  std::string owner;  // "candidate" | "baseline"
  const TensorSet* inputs = nullptr;
  const TensorSet* outputs = nullptr;
  std::vector<uint64_t> poison;  // one pattern per output, in output order
  bool timed = false;            // flush L2 first
};

CallReport run_checked_call(const CallEnvironment& env, const tasks::WorkloadLayout& layout,
                            const CallRequest& request);

// The before part: the inputs' checksums (for finish_call), the outputs poisoned, the harness
// stream finished. An error is the harness's.
Result<std::vector<uint64_t>> prepare_call(const CallEnvironment& env,
                                           const tasks::WorkloadLayout& layout,
                                           const CallRequest& request);

// L2 flushed when `timed` (and `env` has a flush), then everything on the harness stream
// finished: the state a timed call starts from. An error is the harness's.
Status settle_harness(const CallEnvironment& env, bool timed);

// The window of one kiln_launch on `tensors`: fills report's status, errors, times, window,
// records and findings, device_state_changes and activity_problem.
void run_call_window(const CallEnvironment& env, kiln_launch_fn launch,
                     const std::vector<kiln_tensor>& tensors,
                     const std::vector<kiln_scalar>& scalars, bool timed, CallReport* report);

// The after part: inputs unchanged since `before`, every touched tensor's guard bands.
void finish_call(const CallEnvironment& env, const tasks::WorkloadLayout& layout,
                 const CallRequest& request, const std::vector<uint64_t>& before,
                 CallReport* report);

// Checksums of every input of `inputs` (in tensor order; 0 for outputs).
Result<std::vector<uint64_t>> input_checksums(const CallEnvironment& env,
                                              const tasks::WorkloadLayout& layout,
                                              const TensorSet& inputs);

}  // namespace kiln::worker
