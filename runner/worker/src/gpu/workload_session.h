// One workload of a job, in two passes over fresh buffers:
//
// verify pass (correctness before any timing):
//   1. inputs drawn from the hidden seed; the candidate runs twice on them (outputs
//      poisoned with the two NaN patterns), then the baseline;
//   2. gates per call (checked_call.h); unwritten elements (poisoned_outputs); every
//      element against the baseline on the GPU; the exact reference (correctness): with
//      the task's GPU reference every element on the GPU, that reference anchored once to
//      the CPU reference on sampled rows; without one, the CPU reference on all rows or a
//      sample; the two runs against each other (determinism);
//   3. fresh_inputs: the same pointers with new values; the same values with a few
//      elements changed at hidden positions; new pointers with new values. Each result
//      must follow its inputs: results cached by pointer or keyed to a fingerprint of
//      the inputs fail here.
// timing pass (benchmark jobs):
//   4. pairs (candidate, then baseline) on inputs redrawn in place before every pair,
//      L2 flushed before each call; each candidate output compared with the baseline's
//      on the same inputs (a match with an earlier pair's answer means a cache); NVML
//      per pair, throttled pairs discarded; stop per stopping_criterion.h;
//   5. after timing: a perturbation check against the exact reference again.
// With an incumbent (the frontier's best, JobContext::incumbent), each timed sample is a
// triple on the same inputs: candidate, incumbent, baseline; the incumbent's output is
// checked against the baseline's as the candidate's is, and its times give the side-by-side
// ratio speedup_vs_incumbent.
// The candidate always runs before the baseline on new inputs, so no correct answer for
// those inputs exists anywhere in device memory while the candidate runs.
//
// The class is defined over six files, one concept each: workload_session.cpp (buffers,
// draws, calls), call_gates.cpp, output_checks.cpp (against the baseline),
// reference_checks.cpp (against the exact reference), verify_pass.cpp and timing_pass.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "candidate_host.h"
#include "checked_call.h"
#include "kiln/tasks/reference_check.h"
#include "kiln/tasks/task.h"
#include "kiln/worker/event_stream.h"
#include "kiln/worker/gate_ledger.h"
#include "kiln/worker/nvml_probe.h"
#include "kiln/worker/stopping_criterion.h"
#include "kiln/worker/wall_time.h"
#include "kiln/worker/worker_result.h"

namespace kiln::worker {

struct JobContext {
  const tasks::Task* task = nullptr;
  CallEnvironment env;
  CandidateHost* candidate = nullptr;  // runs the candidate's calls in its own process
  // The frontier's best, in a host of its own, timed beside the candidate in the timing pass
  // (null: no incumbent). Its failures are not the candidate's: they end the job as an error.
  CandidateHost* incumbent = nullptr;
  kiln_launch_fn baseline = nullptr;
  kiln_reference_fn reference = nullptr;
  kiln_launch_fn gpu_reference = nullptr;  // the task's exact reference on the GPU, if any
  tasks::Tolerance tolerance;              // the task's, against the exact reference
  tasks::Tolerance
      baseline_tolerance;  // candidate vs baseline: both carry error, so twice the allowance
  tasks::ReferenceBudget budget;
  uint64_t seed = 0;
  GateLedger* gates = nullptr;
  EventStream* events = nullptr;
  NvmlProbe* nvml = nullptr;
  GpuInfo* gpu = nullptr;
  WallTime* wall = nullptr;  // where the passes' time goes (never null in a job)
  int64_t calls = 0;         // candidate and incumbent calls so far (picks the poison pattern)
  uint64_t next_band = 0;    // guard band numbering
  bool fatal = false;        // the context is unusable or the harness broke
  std::string fatal_error;   // when the harness (not the candidate) broke
};

// Releases every buffer shared with the candidate host when it goes out of scope: declared
// after the buffers it covers, so the host closes its mappings before they are freed.
class HostShares {
 public:
  explicit HostShares(CandidateHost* host) : host_(host) {}
  ~HostShares() {
    if (host_ != nullptr) host_->release_all();
  }
  HostShares(const HostShares&) = delete;
  HostShares& operator=(const HostShares&) = delete;

 private:
  CandidateHost* host_;
};

// Who runs a call: the candidate and the incumbent in their hosts, the baseline here.
enum class Caller { kCandidate, kIncumbent, kBaseline };

class WorkloadSession {
 public:
  WorkloadSession(JobContext& job, tasks::WorkloadLayout layout, int index, int total,
                  WorkloadResult* result);

  // Returns false when the workload failed (the result says why).
  bool verify_pass();                              // verify_pass.cpp
  bool timing_pass(const StoppingLimits& limits);  // timing_pass.cpp

 private:
  // What the completion seal adds to a timed call's round trip, for judge_round_trip: the
  // least of a few copies of the candidate's outputs into sealed_candidate_ on the verifier's
  // clock, at most what the GPU's HBM needs for them plus a launch (timing_pass.cpp).
  Result<double> seal_cost_us();
  struct OutputComparison {
    tasks::ErrorStats stats;  // first_mismatches carry expected/actual values
    int64_t bitwise = 0;
    bool ok = true;
    std::string error;  // harness failure
  };

  // Input draws, one stream each and distinct across the passes: the verify pass's first
  // inputs, its new values at the same addresses and at new ones; timing pair p draws
  // kDrawTimingBase + p.
  static constexpr uint64_t kDrawVerify = 0;
  static constexpr uint64_t kDrawFresh = 1000001;
  static constexpr uint64_t kDrawNewPointers = 1000002;
  static constexpr uint64_t kDrawTimingBase = 100;
  static constexpr int64_t kPerturbedPerInput = 64;  // elements perturb_inputs changes per input

  // Buffers, inputs and calls (workload_session.cpp).
  Status allocate(bool with_baseline_sets);
  // Each masked output's ignored_rows on the device (the harness's own copy), for compare().
  Status upload_row_masks();
  Status draw_inputs(TensorSet& inputs, uint64_t draw);
  Status perturb_inputs(TensorSet& inputs, uint64_t salt, std::vector<int64_t>* touched_rows);
  // Input checksums as the harness left each input set when it drew or perturbed it. Every
  // call and every reference check must find them so: a write between calls (a background
  // thread or stream of the candidate) would otherwise pass unseen, and the baseline and the
  // reference would then agree with an answer for inputs the harness never chose.
  Status record_drawn(const TensorSet& inputs);
  // The names of the inputs whose checksums `now` differ from the drawn ones (none when `inputs`
  // was not drawn by this session).
  std::vector<std::string> changed_since_drawn(const TensorSet& inputs,
                                               const std::vector<uint64_t>& now) const;
  // Fails input_checksum when an input changed since it was drawn; `phase` says before what.
  bool inputs_as_drawn(const TensorSet& inputs, const std::string& phase);
  // A copy of `outputs`' output tensors in new device buffers (kept for a later comparison).
  Status keep_outputs(const TensorSet& outputs, TensorSet* kept);
  // `from`'s output tensors into `to`'s (both allocated for this layout), finished on return.
  Status copy_outputs(const TensorSet& from, const TensorSet& to);
  // A hosted call with `seal` set copies its outputs there at the host's interim answer, before
  // the verifier's clock stops (the completion seal: see timing_pass).
  CallReport call(Caller caller, const TensorSet& inputs, const TensorSet& outputs, bool timed,
                  const TensorSet* seal = nullptr);
  // A hosted call (candidate or incumbent): the checks and, when timed, the L2 flush here, the
  // window in `host`.
  CallReport hosted_call(const CallRequest& request, CandidateHost& host, const TensorSet* seal);
  // Runs `check` on the incumbent's call or output: a gate it fails is recorded not against
  // the candidate but as the job's error, naming the incumbent. False when it failed.
  bool judge_incumbent(const std::function<bool()>& check);
  std::vector<uint64_t> poison_for_call(int64_t call) const;
  Status host_copy(const TensorSet& set, bool outputs, tasks::HostTensors* host);
  void fail(std::string_view gate, const std::string& detail);
  void progress(const std::string& message);
  void harness_failure(const std::string& message);
  double* wall(double WallTime::*field) { return job_.wall ? &(job_.wall->*field) : nullptr; }

  // Gates (call_gates.cpp). The per-call gates; false when a gate failed (or the call was fatal).
  bool gate_call(const CallReport& report, const std::string& phase);
  // hidden_stream_work once every call has returned; false when the candidate left work.
  bool check_work_after_calls();
  void fail_hidden_work(const std::string& where, std::vector<std::string> hidden);

  // Output checks (output_checks.cpp).
  OutputComparison compare(const TensorSet& actual, const TensorSet& expected,
                           const tasks::Tolerance& tolerance, const std::vector<uint64_t>& poison);
  // The candidate's output against the baseline's on the same inputs; on a mismatch,
  // against earlier answers (stale -> fresh_inputs) before blaming correctness.
  bool check_against_baseline(const TensorSet& candidate, const TensorSet& baseline,
                              const std::vector<const TensorSet*>& earlier,
                              const std::vector<uint64_t>& poison, const std::string& phase,
                              std::string_view mismatch_gate);

  // Against the exact reference (reference_checks.cpp). The candidate's outputs for `inputs`:
  // with the task's GPU reference, every element; else the CPU reference's rows (all, or a
  // sample with `required_rows`, drawn from `plan_seed`). Fails `mismatch_gate` on a
  // mismatch; the answer stays for against_reference.
  bool reference_check(const TensorSet& inputs, const TensorSet& outputs,
                       const std::vector<uint64_t>& poison,
                       const std::vector<int64_t>& required_rows, uint64_t plan_seed,
                       const std::string& phase, std::string_view mismatch_gate,
                       tasks::ErrorStats* stats);
  // Other outputs for the same inputs against the last reference_check's answer, on the
  // same elements: on the GPU (`outputs`) or from host copies (`host`, output slots only).
  Result<tasks::ErrorStats> against_reference(const TensorSet& outputs,
                                              const std::vector<uint64_t>& poison);
  Result<tasks::ErrorStats> against_reference(const tasks::HostTensors& host,
                                              const std::vector<uint64_t>& poison);
  bool gpu_reference_check(const TensorSet& inputs, const TensorSet& outputs,
                           const std::vector<uint64_t>& poison, uint64_t anchor_seed,
                           const std::string& phase, std::string_view mismatch_gate,
                           tasks::ErrorStats* stats);
  // The GPU reference's answer for `inputs` into reference_out_, every element written.
  Status run_gpu_reference(const TensorSet& inputs);
  // The GPU reference's answer against the CPU reference's on sampled rows (harness error
  // when they disagree beyond a sixteenth of the tolerance).
  bool anchor_gpu_reference(const TensorSet& inputs, uint64_t seed);
  // Inputs from `inputs` and outputs from `outputs` in one host copy, as the CPU reference
  // takes them; false (a harness failure) when a copy fails.
  bool host_copy_for_reference(const TensorSet& inputs, const TensorSet& outputs,
                               tasks::HostTensors* host);
  // result_->checked: the rows `plan` covers, of the outputs' first extent.
  void note_checked_rows(const tasks::RowPlan& plan);

  JobContext& job_;
  tasks::WorkloadLayout layout_;
  int index_;
  int total_;
  WorkloadResult* result_;
  TensorSet inputs_;
  TensorSet candidate_out_;
  TensorSet baseline_out_[2];
  TensorSet baseline_first_;
  std::vector<std::pair<const TensorSet*, std::vector<uint64_t>>> drawn_;  // record_drawn
  TensorSet reference_out_;  // the GPU reference's last answer
  // Per tensor: the output's ignored_rows on the device (null: every row checked).
  std::vector<std::unique_ptr<GuardedBuffer>> row_masks_;
  std::optional<tasks::ReferenceRun> cpu_answer_;  // the CPU reference's last answer
  bool anchored_ = false;                          // the GPU reference agreed with the CPU's
  TensorSet incumbent_out_;                        // the incumbent's outputs (timing pass)
  // The timed calls' outputs as they were when each host said its GPU work was done (the
  // completion seal), in buffers never shared with a host: what the timing pass compares.
  TensorSet sealed_candidate_;
  TensorSet sealed_incumbent_;
  bool judging_incumbent_ = false;  // fail() records into incumbent_failure_
  std::string incumbent_failure_;
  // Last: released before the buffers above are freed.
  HostShares shares_{job_.candidate};
  HostShares incumbent_shares_{job_.incumbent};
};

}  // namespace kiln::worker
