// The integrity gates of a verify or benchmark RESULT (runner/protocol/PROTOCOL.md, "Gates"):
// their names, the fixed set a result must carry to be scored, and the states a gate reports.
// The worker reports every gate of the set, each passed, failed or not run (with why); the
// server refuses a result that claims a score without every gate of its kind passed. A gate
// that could not run (CUPTI unavailable, NVML missing, the job's time ran out) never counts as
// passed: the result is unscored and says which gate and why.
#pragma once

#include <array>
#include <string_view>

namespace kiln::runner::protocol {

namespace gate {
inline constexpr std::string_view kBannedSymbols = "banned_symbols";
inline constexpr std::string_view kPoisonedOutputs = "poisoned_outputs";
inline constexpr std::string_view kFreshInputs = "fresh_inputs";
inline constexpr std::string_view kInputChecksum = "input_checksum";
inline constexpr std::string_view kGuardBands = "guard_bands";
inline constexpr std::string_view kDeterminism = "determinism";
inline constexpr std::string_view kHiddenStreamWork = "hidden_stream_work";
inline constexpr std::string_view kCudaErrors = "cuda_errors";
inline constexpr std::string_view kCorrectness = "correctness";
// The candidate left the state the harness owns as it found it: the process environment when
// its library loaded, the device's persisting-L2 carve-out and cache preference, the launch
// stream's access policy (checked and put back after every call).
inline constexpr std::string_view kHarnessState = "harness_state";
// The activity record (CUPTI) saw the harness's markers and dropped no record, so every kernel
// in a timed window was seen and charged.
inline constexpr std::string_view kActivityRecord = "activity_record";
// NVML sampled the SM clock and throttle reasons around every timed sample (throttled samples
// are discarded only when they can be seen).
inline constexpr std::string_view kClockMonitoring = "clock_monitoring";
// The candidate's process (the candidate host: the candidate never runs in the verifier) kept
// to the protocol: it did not die, hang or answer out of turn, every answer parsed, and no
// time it reported exceeds the verifier's own clock for the call.
inline constexpr std::string_view kCandidateProcess = "candidate_process";
// The candidate's device memory did not keep growing call after call (CUPTI's allocation and
// release records in its calls; a workspace allocated once and kept is fine).
inline constexpr std::string_view kDeviceMemory = "device_memory";
}  // namespace gate

// Every gate a verify result must carry, passed, in the order results list them.
inline constexpr std::array<std::string_view, 13> kVerifyGates = {
    gate::kBannedSymbols, gate::kPoisonedOutputs, gate::kFreshInputs,      gate::kInputChecksum,
    gate::kGuardBands,    gate::kDeterminism,     gate::kHiddenStreamWork, gate::kCudaErrors,
    gate::kCorrectness,   gate::kHarnessState,    gate::kActivityRecord,   gate::kCandidateProcess,
    gate::kDeviceMemory};

// A benchmark result needs those and the clock monitoring of its timed samples.
inline constexpr std::array<std::string_view, 14> kBenchmarkGates = {
    gate::kBannedSymbols,    gate::kPoisonedOutputs, gate::kFreshInputs,
    gate::kInputChecksum,    gate::kGuardBands,      gate::kDeterminism,
    gate::kHiddenStreamWork, gate::kCudaErrors,      gate::kCorrectness,
    gate::kHarnessState,     gate::kActivityRecord,  gate::kClockMonitoring,
    gate::kCandidateProcess, gate::kDeviceMemory};

// The `state` of a gate in a RESULT.
namespace gate_state {
inline constexpr std::string_view kPassed = "passed";
inline constexpr std::string_view kFailed = "failed";
inline constexpr std::string_view kNotRun = "not_run";
}  // namespace gate_state

constexpr bool is_gate_state(std::string_view state) {
  return state == gate_state::kPassed || state == gate_state::kFailed ||
         state == gate_state::kNotRun;
}

}  // namespace kiln::runner::protocol
