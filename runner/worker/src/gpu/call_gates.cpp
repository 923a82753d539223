// The gates on every call (cuda_errors, the kiln_launch status, input_checksum, guard_bands,
// hidden_stream_work) and, after the verify pass, on work the candidate left running.
#include "kiln/base/text.h"
#include "kiln/worker/loaded_libraries.h"
#include "workload_session.h"

namespace kiln::worker {

namespace {

const char* status_name(int status) {
  switch (status) {
    case KILN_ERR_BAD_ARGUMENT:
      return "KILN_ERR_BAD_ARGUMENT";
    case KILN_ERR_UNSUPPORTED:
      return "KILN_ERR_UNSUPPORTED";
    case KILN_ERR_LAUNCH:
      return "KILN_ERR_LAUNCH";
    default:
      return "an unknown status";
  }
}

}  // namespace

bool WorkloadSession::gate_call(const CallReport& report, const std::string& phase) {
  if (!report.integrity_error.empty()) {
    fail(gate::kCandidateProcess, phase + ": " + report.integrity_error);
    job_.fatal = true;
    job_.fatal_error.clear();  // the candidate's doing: a failed result, not a worker error
    return false;
  }
  if (!report.harness_error.empty()) {
    harness_failure(report.harness_error);
    return false;
  }
  if (report.owner == "baseline") {
    if (report.status != KILN_OK || !report.cuda_error.empty()) {
      harness_failure("the task's baseline failed (" +
                      (report.cuda_error.empty()
                           ? std::string("kiln_launch returned ") + status_name(report.status)
                           : report.cuda_error) +
                      "); the task bundle needs fixing");
      if (report.fatal) job_.fatal = true;
      return false;
    }
    return true;
  }
  bool ok = true;
  const std::string where = phase + ": ";
  if (const auto banned = banned_among(report.libraries, job_.task->banned_symbols);
      !banned.empty()) {
    fail(gate::kBannedSymbols, where + join(banned, "; "));
    return false;
  }
  if (!report.cuda_error.empty()) {
    fail(gate::kCudaErrors,
         where + report.cuda_error + "; check every CUDA call and launch in the candidate");
    if (report.fatal) {
      job_.fatal = true;
      job_.fatal_error.clear();  // the candidate's fault: a failed result, not a worker error
    }
    return false;
  }
  job_.gates->pass(gate::kCudaErrors);
  if (report.status != KILN_OK) {
    const std::string_view gate_name =
        report.status == KILN_ERR_LAUNCH ? gate::kCudaErrors : gate::kCorrectness;
    fail(gate_name, where + "kiln_launch returned " + std::to_string(report.status) + " (" +
                        status_name(report.status) +
                        ") for a scored workload; every scored workload must be handled");
    return false;
  }
  if (!report.changed_inputs.empty()) {
    fail(gate::kInputChecksum,
         where + "kiln_launch modified input " + join(report.changed_inputs, ", ") +
             " (its checksum differs before and after the call); inputs are read-only");
    ok = false;
  } else if (!report.changed_before_call.empty()) {
    fail(gate::kInputChecksum,
         where + "input " + join(report.changed_before_call, ", ") +
             " changed after the harness drew it, before this call began (a background thread "
             "or stream of the candidate wrote it between calls); inputs are read-only, at all "
             "times");
    ok = false;
  } else {
    job_.gates->pass(gate::kInputChecksum);
  }
  if (!report.guard_damage.empty()) {
    fail(gate::kGuardBands,
         where + join(report.guard_damage, "; ") + "; write only inside the output tensors");
    ok = false;
  } else {
    job_.gates->pass(gate::kGuardBands);
  }
  if (!report.device_state_changes.empty()) {
    fail(gate::kHarnessState, where + "kiln_launch changed " +
                                  join(report.device_state_changes, "; ") +
                                  " (put back by the harness); leave device settings as they are");
    ok = false;
  } else if (job_.env.device_state != nullptr) {
    job_.gates->pass(gate::kHarnessState);
  }
  std::vector<std::string> syncs = report.findings.host_syncs;
  if (report.waited_in_call && syncs.empty())
    syncs.push_back("a wait the launch gate saw (it held the stream " +
                    std::to_string(LaunchGate::kTimeoutNs / 1'000'000) + " ms)");
  if (!syncs.empty() && !job_.task->allow_host_sync) {
    fail(gate::kHiddenStreamWork, where + "kiln_launch waited for the GPU inside the call (" +
                                      join(syncs, ", ") +
                                      "); the task forbids host synchronization inside "
                                      "kiln_launch: enqueue the work on the stream and return");
    ok = false;
  } else if (!syncs.empty()) {
    job_.gates->note(gate::kHiddenStreamWork,
                     "kiln_launch waited for the GPU inside the call (" + join(syncs, ", ") +
                         "); the task allows it, and its samples include the wait");
  }
  if (!report.memory_leak.empty()) {
    fail(gate::kDeviceMemory, where + report.memory_leak);
    ok = false;
  } else if (report.memory_recorded) {
    job_.gates->pass(gate::kDeviceMemory);
  } else if (report.remote) {
    job_.gates->not_run(gate::kDeviceMemory,
                        "CUPTI records no device allocations in the candidate's process");
  }
  if (!report.activity_problem.empty()) {
    fail(gate::kActivityRecord, where + report.activity_problem);
    ok = false;
  }
  // The candidate's records stay in its host, which folds what it saw into violations (work on
  // other streams, other threads' calls, stray work after earlier calls).
  std::vector<std::string> hidden = report.findings.violations;
  if (report.activity) {
    if (!hidden.empty()) {
      fail_hidden_work(where, std::move(hidden));
      ok = false;
    } else {
      job_.gates->pass(gate::kHiddenStreamWork);
    }
    for (const auto& note : report.findings.notes) job_.gates->note(gate::kHiddenStreamWork, note);
  }
  return ok;
}

void WorkloadSession::fail_hidden_work(const std::string& where, std::vector<std::string> hidden) {
  if (hidden.size() > 4) hidden.resize(4);
  fail(gate::kHiddenStreamWork,
       where + join(hidden, "; ") +
           "; enqueue all work on the stream passed to kiln_launch, from the calling thread");
}

bool WorkloadSession::check_work_after_calls() {
  if (job_.candidate == nullptr) return true;
  auto hidden = job_.candidate->work_after_calls();
  if (!hidden) {
    fail(gate::kCandidateProcess, "after the calls: " + hidden.error().message);
    job_.fatal = true;
    job_.fatal_error.clear();
    return false;
  }
  if (hidden->empty()) return true;
  fail_hidden_work("after the calls: ", std::move(*hidden));
  return false;
}

}  // namespace kiln::worker
