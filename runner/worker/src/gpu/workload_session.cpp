#include "workload_session.h"

#include <algorithm>
#include <thread>

#include "cuda_status.h"
#include "harness_kernels.h"
#include "kiln/tasks/hash_mix.h"
#include "kiln/tasks/numeric_codec.h"
#include "kiln/tasks/poison_pattern.h"
#include "kiln/worker/throttle_policy.h"

namespace kiln::worker {

namespace {

constexpr uint64_t kPurposeInput = 0x696e707574ull;    // "input"
constexpr uint64_t kPurposePerturb = 0x7065727475ull;  // "pertu"
constexpr uint64_t kDrawVerify = 0;
constexpr uint64_t kDrawFresh = 1000001;
constexpr uint64_t kDrawNewPointers = 1000002;
constexpr uint64_t kDrawTimingBase = 100;
constexpr int64_t kWarmupPairs = 1;  // the first timed pair only warms clocks and caches
constexpr int64_t kPerturbedPerInput = 64;

std::string join(const std::vector<std::string>& items, const std::string& separator = "; ") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

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

WorkloadSession::WorkloadSession(JobContext& job, tasks::WorkloadLayout layout, int index,
                                 int total, WorkloadResult* result)
    : job_(job), layout_(std::move(layout)), index_(index), total_(total), result_(result) {}

void WorkloadSession::fail(const char* gate, const std::string& detail) {
  job_.gates->fail(gate, layout_.workload, detail);
  if (result_->failure.empty()) result_->failure = std::string(gate) + ": " + detail;
  result_->passed = false;
}

void WorkloadSession::harness_failure(const std::string& message) {
  job_.fatal = true;
  if (job_.fatal_error.empty()) job_.fatal_error = layout_.workload + ": " + message;
  result_->passed = false;
}

void WorkloadSession::progress(const std::string& message) {
  job_.events->progress(layout_.workload, index_, total_, message);
}

std::vector<uint64_t> WorkloadSession::poison_for_call(int64_t call) const {
  std::vector<uint64_t> patterns;
  for (const auto& t : layout_.tensors) {
    if (t.is_output) patterns.push_back(tasks::PoisonPattern::for_call(t.dtype, call));
  }
  return patterns;
}

Status WorkloadSession::allocate(bool timing) {
  const cudaStream_t hs = job_.env.harness_stream;
  inputs_ = TensorSet();
  if (auto s = inputs_.allocate(layout_, true, false, job_.env.guard_seed, &job_.next_band, hs); !s)
    return s;
  if (auto s =
          candidate_out_.allocate(layout_, false, true, job_.env.guard_seed, &job_.next_band, hs);
      !s)
    return s;
  if (auto s =
          baseline_out_[0].allocate(layout_, false, true, job_.env.guard_seed, &job_.next_band, hs);
      !s)
    return s;
  if (timing) {
    baseline_first_ = TensorSet();
    return baseline_out_[1].allocate(layout_, false, true, job_.env.guard_seed, &job_.next_band,
                                     hs);
  }
  baseline_out_[1] = TensorSet();
  return baseline_first_.allocate(layout_, false, true, job_.env.guard_seed, &job_.next_band, hs);
}

Status WorkloadSession::draw_inputs(TensorSet& inputs, uint64_t draw) {
  const uint64_t draw_id = (static_cast<uint64_t>(index_) << 40) | draw;
  for (size_t t = 0; t < layout_.tensors.size(); ++t) {
    const tasks::TensorLayout& tensor = layout_.tensors[t];
    GuardedBuffer* buffer = inputs.at(t);
    if (tensor.is_output || buffer == nullptr) continue;
    const uint64_t key = tasks::stream_key(job_.seed, kPurposeInput, t, draw_id);
    if (auto s = cuda_ok(launch_draw_uniform(buffer->data(), tensor.elements(), tensor.dtype,
                                             tensor.distribution.low, tensor.distribution.high, key,
                                             job_.env.harness_stream),
                         "drawing " + tensor.name);
        !s) {
      return s;
    }
  }
  return cuda_ok(cudaStreamSynchronize(job_.env.harness_stream), "drawing inputs");
}

CallReport WorkloadSession::call(bool candidate, const TensorSet& inputs, const TensorSet& outputs,
                                 bool timed) {
  CallRequest request;
  request.launch = candidate ? job_.candidate : job_.baseline;
  request.owner = candidate ? "candidate" : "baseline";
  request.inputs = &inputs;
  request.outputs = &outputs;
  request.poison = poison_for_call(candidate ? job_.calls++ : 0);
  request.timed = timed;
  CallReport report = run_checked_call(job_.env, layout_, request);
  windows_.push_back(report.window);
  return report;
}

bool WorkloadSession::gate_call(const CallReport& report, const std::string& phase) {
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
    const char* gate_name =
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
  } else {
    job_.gates->pass(gate::kInputChecksum);
  }
  if (!report.guard_damage.empty()) {
    fail(gate::kGuardBands,
         where + join(report.guard_damage) + "; write only inside the output tensors");
    ok = false;
  } else {
    job_.gates->pass(gate::kGuardBands);
  }
  std::vector<std::string> hidden = report.findings.violations;
  for (const auto& call : ActivityAnalysis::foreign_thread_calls(report.records, job_.env.activity))
    hidden.push_back(call);
  std::vector<std::string> owners;
  const auto stray =
      ActivityAnalysis::stray_work(report.records, windows_, job_.env.activity, &owners);
  for (size_t i = 0; i < stray.size(); ++i) {
    if (owners[i] == "candidate") hidden.push_back(stray[i]);
  }
  if (job_.env.recorder != nullptr) {
    if (!hidden.empty()) {
      if (hidden.size() > 4) hidden.resize(4);
      fail(gate::kHiddenStreamWork,
           where + join(hidden) +
               "; enqueue all work on the stream passed to kiln_launch, from the calling thread");
      ok = false;
    } else {
      job_.gates->pass(gate::kHiddenStreamWork);
    }
    for (const auto& note : report.findings.notes) job_.gates->note(gate::kHiddenStreamWork, note);
  }
  return ok;
}

WorkloadSession::OutputComparison WorkloadSession::compare(const TensorSet& actual,
                                                           const TensorSet& expected,
                                                           const tasks::Tolerance& tolerance,
                                                           const std::vector<uint64_t>& poison) {
  OutputComparison out;
  const cudaStream_t hs = job_.env.harness_stream;
  size_t output_index = 0;
  for (size_t t = 0; t < layout_.tensors.size(); ++t) {
    const tasks::TensorLayout& tensor = layout_.tensors[t];
    if (!tensor.is_output) continue;
    const uint64_t pattern = output_index < poison.size() ? poison[output_index] : 0;
    ++output_index;
    CompareCounters counters{};
    const GuardedBuffer* actual_buffer = actual.at(t);
    const GuardedBuffer* expected_buffer = expected.at(t);
    if (actual_buffer == nullptr || expected_buffer == nullptr) {
      out.ok = false;
      out.error = "internal: no buffer for output " + tensor.name;
      return out;
    }
    const void* a = actual_buffer->data();
    const void* e = expected_buffer->data();
    cudaError_t err = reset_compare(job_.env.scratch->compare(), hs);
    if (err == cudaSuccess) {
      err = launch_compare(a, e, tensor.dtype, tensor.elements(), tolerance.atol, tolerance.rtol,
                           pattern, job_.env.scratch->compare(), hs);
    }
    if (err == cudaSuccess) {
      err = cudaMemcpyAsync(&counters, job_.env.scratch->compare(), sizeof counters,
                            cudaMemcpyDeviceToHost, hs);
    }
    if (err == cudaSuccess) err = cudaStreamSynchronize(hs);
    if (err != cudaSuccess) {
      out.ok = false;
      out.error = describe_cuda(err, "comparing " + tensor.name);
      return out;
    }
    tasks::ErrorStats stats;
    stats.checked = tensor.elements();
    stats.mismatches = static_cast<int64_t>(counters.mismatches);
    stats.nan = static_cast<int64_t>(counters.nan);
    stats.inf = static_cast<int64_t>(counters.inf);
    stats.poisoned = static_cast<int64_t>(counters.poisoned);
    stats.max_abs = tasks::double_from_bits(counters.max_abs_bits);
    stats.max_rel = tasks::double_from_bits(counters.max_rel_bits);
    if (counters.first_mismatch != ~0ull) {
      const auto flat = static_cast<int64_t>(counters.first_mismatch);
      const int size = tasks::dtype_size(tensor.dtype);
      uint64_t abits = 0;
      uint64_t ebits = 0;
      cudaMemcpyAsync(&abits, static_cast<const unsigned char*>(a) + flat * size, size,
                      cudaMemcpyDeviceToHost, hs);
      cudaMemcpyAsync(&ebits, static_cast<const unsigned char*>(e) + flat * size, size,
                      cudaMemcpyDeviceToHost, hs);
      cudaStreamSynchronize(hs);
      tasks::Mismatch m;
      m.index = tensor.index_of(flat);
      m.expected = tasks::decode(tensor.dtype, ebits);
      m.actual = tasks::decode(tensor.dtype, abits);
      stats.first_mismatches.push_back(m);
    }
    out.bitwise += static_cast<int64_t>(counters.bitwise);
    out.stats.merge(stats);
  }
  return out;
}

Status WorkloadSession::host_copy(const TensorSet& set, bool outputs, tasks::HostTensors* host) {
  host->resize(layout_.tensors.size());
  for (size_t t = 0; t < layout_.tensors.size(); ++t) {
    const GuardedBuffer* buffer = set.at(t);
    if (layout_.tensors[t].is_output != outputs || buffer == nullptr) continue;
    if (auto s =
            copy_to_host(buffer->data(), buffer->bytes(), &(*host)[t], job_.env.harness_stream);
        !s)
      return s;
  }
  return Ok{};
}

bool WorkloadSession::check_against_baseline(const TensorSet& candidate, const TensorSet& baseline,
                                             const std::vector<const TensorSet*>& earlier,
                                             const std::vector<uint64_t>& poison,
                                             const std::string& phase, const char* mismatch_gate) {
  OutputComparison cmp = compare(candidate, baseline, job_.baseline_tolerance, poison);
  if (!cmp.ok) {
    harness_failure(cmp.error);
    return false;
  }
  if (cmp.stats.poisoned > 0) {
    fail(gate::kPoisonedOutputs,
         phase + ": " + std::to_string(cmp.stats.poisoned) + " of " +
             std::to_string(cmp.stats.checked) +
             " output elements were never written (they still hold the harness's poison "
             "NaN); write every element of every output on every call");
    return false;
  }
  job_.gates->pass(gate::kPoisonedOutputs);
  if (cmp.stats.mismatches == 0) return true;
  for (const TensorSet* old : earlier) {
    OutputComparison stale = compare(candidate, *old, job_.baseline_tolerance, poison);
    if (stale.ok && stale.stats.mismatches == 0) {
      fail(gate::kFreshInputs,
           phase +
               ": the output is the answer for earlier inputs, not for the current ones "
               "(results carried across calls or keyed to where the inputs live); compute "
               "every call from the values it is given");
      return false;
    }
  }
  fail(mismatch_gate,
       phase +
           ": differs from the baseline's output on the same inputs by more than twice the "
           "task's tolerance: " +
           cmp.stats.summary());
  return false;
}

bool WorkloadSession::reference_check(const TensorSet& inputs, const TensorSet& outputs,
                                      const std::vector<uint64_t>& poison,
                                      const std::vector<int64_t>& required_rows, uint64_t plan_seed,
                                      const std::string& phase, const char* mismatch_gate,
                                      tasks::ErrorStats* stats) {
  tasks::HostTensors host;
  if (auto s = host_copy(inputs, false, &host); !s) {
    harness_failure(s.error().message);
    return false;
  }
  if (auto s = host_copy(outputs, true, &host); !s) {
    harness_failure(s.error().message);
    return false;
  }
  const tasks::RowPlan plan =
      tasks::RowSampler::plan(layout_, job_.budget, plan_seed, required_rows);
  const tasks::ReferenceCheck check(job_.reference, job_.tolerance);
  auto run = check.run(layout_, host, plan);
  if (!run) {
    harness_failure(run.error().message);
    return false;
  }
  *stats = check.compare(layout_, *run, host, poison);
  int64_t rows = 0;
  for (const auto& t : layout_.tensors) {
    if (t.is_output) rows = t.shape[0];
  }
  result_->checked = plan.describe(rows);
  if (!stats->passes(job_.tolerance.max_mismatch_fraction)) {
    fail(mismatch_gate, phase + ": against the CPU reference, " + stats->summary());
    return false;
  }
  return true;
}

Status WorkloadSession::perturb_inputs(TensorSet& inputs, uint64_t salt,
                                       std::vector<int64_t>* touched_rows) {
  const std::vector<bool> sliced = tasks::RowSampler::sliced_tensors(layout_);
  tasks::HostTensors host;
  if (auto s = host_copy(inputs, false, &host); !s) return s;
  for (size_t t = 0; t < layout_.tensors.size(); ++t) {
    const tasks::TensorLayout& tensor = layout_.tensors[t];
    GuardedBuffer* buffer = inputs.at(t);
    if (tensor.is_output || buffer == nullptr) continue;
    const int64_t n = tensor.elements();
    const int size = tasks::dtype_size(tensor.dtype);
    const uint64_t key = tasks::stream_key(job_.seed, kPurposePerturb, t,
                                           (static_cast<uint64_t>(index_) << 40) | salt);
    const int64_t count = std::min<int64_t>(kPerturbedPerInput, n);
    for (int64_t j = 0; j < count; ++j) {
      const auto position = static_cast<int64_t>(
          tasks::unit_draw(key, static_cast<uint64_t>(2 * j)) * static_cast<double>(n));
      unsigned char* element = host[t].data() + position * size;
      uint64_t old_bits = 0;
      std::memcpy(&old_bits, element, static_cast<size_t>(size));
      uint64_t bits = old_bits;
      for (int attempt = 0; attempt < 8 && bits == old_bits; ++attempt) {
        const double u = tasks::unit_draw(key, static_cast<uint64_t>(2 * j + 1 + 1000 * attempt));
        bits = tasks::encode(
            tensor.dtype,
            tensor.distribution.low + (tensor.distribution.high - tensor.distribution.low) * u);
      }
      if (bits == old_bits)
        bits ^= tasks::dtype_is_float(tensor.dtype) ? (uint64_t{1} << (8 * size - 1)) : 1;
      std::memcpy(element, &bits, static_cast<size_t>(size));
      if (sliced[t]) touched_rows->push_back(position / (n / tensor.shape[0]));
    }
    if (auto s = cuda_ok(cudaMemcpyAsync(buffer->data(), host[t].data(), host[t].size(),
                                         cudaMemcpyHostToDevice, job_.env.harness_stream),
                         "uploading perturbed " + tensor.name);
        !s) {
      return s;
    }
  }
  return cuda_ok(cudaStreamSynchronize(job_.env.harness_stream), "uploading perturbed inputs");
}

bool WorkloadSession::verify_pass() {
  result_->name = layout_.workload;
  result_->ran = true;
  result_->passed = true;
  progress("verify: allocating and drawing inputs");
  if (auto s = allocate(false); !s) {
    harness_failure(s.error().message);
    return false;
  }
  if (auto s = draw_inputs(inputs_, kDrawVerify); !s) {
    harness_failure(s.error().message);
    return false;
  }
  // Two candidate runs on the same inputs (determinism), then the baseline.
  progress("verify: first calls");
  const int64_t first_call = job_.calls;
  CallReport run1 = call(true, inputs_, candidate_out_, false);
  if (!gate_call(run1, "first call")) return false;
  tasks::HostTensors host1;
  if (auto s = host_copy(candidate_out_, true, &host1); !s) {
    harness_failure(s.error().message);
    return false;
  }
  CallReport run2 = call(true, inputs_, candidate_out_, false);
  if (!gate_call(run2, "second call")) return false;
  CallReport base = call(false, inputs_, baseline_first_, false);
  if (!gate_call(base, "baseline")) return false;
  const std::vector<uint64_t> poison1 = poison_for_call(first_call);
  const std::vector<uint64_t> poison2 = poison_for_call(first_call + 1);
  if (!check_against_baseline(candidate_out_, baseline_first_, {}, poison2, "first inputs",
                              gate::kCorrectness)) {
    return false;
  }

  progress("verify: CPU reference");
  tasks::HostTensors host2;
  if (auto s = host_copy(inputs_, false, &host2); !s) {
    harness_failure(s.error().message);
    return false;
  }
  if (auto s = host_copy(candidate_out_, true, &host2); !s) {
    harness_failure(s.error().message);
    return false;
  }
  const tasks::RowPlan plan =
      tasks::RowSampler::plan(layout_, job_.budget, job_.seed ^ static_cast<uint64_t>(index_), {});
  const tasks::ReferenceCheck check(job_.reference, job_.tolerance);
  auto reference = check.run(layout_, host2, plan);
  if (!reference) {
    harness_failure(reference.error().message);
    return false;
  }
  const tasks::ErrorStats stats2 = check.compare(layout_, *reference, host2, poison2);
  int64_t rows = 0;
  for (const auto& t : layout_.tensors) {
    if (t.is_output) rows = t.shape[0];
  }
  result_->checked = plan.describe(rows);
  result_->errors = stats2;
  if (!stats2.passes(job_.tolerance.max_mismatch_fraction)) {
    fail(gate::kCorrectness, "against the CPU reference, " + stats2.summary());
    return false;
  }
  job_.gates->pass(gate::kCorrectness);
  {
    // The baseline itself against the reference: a task sanity check, reported only.
    tasks::HostTensors host_base = host2;
    if (host_copy(baseline_first_, true, &host_base)) {
      const tasks::ErrorStats base_stats =
          check.compare(layout_, *reference, host_base, poison_for_call(0));
      result_->extra["baseline_errors"] = {{"max_abs", base_stats.max_abs},
                                           {"max_rel", base_stats.max_rel},
                                           {"mismatches", base_stats.mismatches}};
      if (!base_stats.passes(job_.tolerance.max_mismatch_fraction)) {
        job_.events->log("warning", layout_.workload +
                                        ": the baseline itself misses the task's tolerance: " +
                                        base_stats.summary());
      }
    }
  }

  // Determinism: the two runs, bit for bit.
  int64_t differing = 0;
  int64_t total = 0;
  for (size_t t = 0; t < layout_.tensors.size(); ++t) {
    if (!layout_.tensors[t].is_output) continue;
    differing += tasks::count_bitwise_differences(
        host1[t].data(), host2[t].data(), layout_.tensors[t].dtype, layout_.tensors[t].elements());
    total += layout_.tensors[t].elements();
  }
  result_->extra["determinism_bitwise_differences"] = differing;
  if (differing == 0) {
    job_.gates->pass(gate::kDeterminism);
  } else {
    tasks::HostTensors first = host2;
    for (size_t t = 0; t < layout_.tensors.size(); ++t) {
      if (layout_.tensors[t].is_output) first[t] = host1[t];
    }
    const tasks::ErrorStats stats1 = check.compare(layout_, *reference, first, poison1);
    tasks::ErrorStats between;
    for (size_t t = 0; t < layout_.tensors.size(); ++t) {
      if (!layout_.tensors[t].is_output) continue;
      between.merge(tasks::compare_host(host1[t].data(), host2[t].data(), layout_.tensors[t].dtype,
                                        layout_.tensors[t].elements(), layout_.tensors[t].shape,
                                        job_.baseline_tolerance, 0));
    }
    const std::string what = std::to_string(differing) + " of " + std::to_string(total) +
                             " elements differ bitwise between two runs on the same inputs";
    if (!stats1.passes(job_.tolerance.max_mismatch_fraction) || between.mismatches > 0) {
      fail(gate::kDeterminism, what + ", beyond the tolerance (" +
                                   (between.mismatches > 0 ? between.summary() : stats1.summary()) +
                                   "): a race, or a read of memory nothing wrote");
      return false;
    }
    job_.gates->pass(gate::kDeterminism);
    job_.gates->note(gate::kDeterminism,
                     layout_.workload + ": " + what +
                         ", all within tolerance (passes; the summation order varies)");
  }

  // Fresh inputs: new values at the same addresses; a few values changed; new addresses.
  progress("verify: fresh inputs");
  if (auto s = draw_inputs(inputs_, kDrawFresh); !s) {
    harness_failure(s.error().message);
    return false;
  }
  int64_t call_no = job_.calls;
  CallReport fresh = call(true, inputs_, candidate_out_, false);
  if (!gate_call(fresh, "new values at the same addresses")) return false;
  CallReport fresh_base = call(false, inputs_, baseline_out_[0], false);
  if (!gate_call(fresh_base, "baseline")) return false;
  if (!check_against_baseline(candidate_out_, baseline_out_[0], {&baseline_first_},
                              poison_for_call(call_no), "new values at the same addresses",
                              gate::kFreshInputs)) {
    return false;
  }

  std::vector<int64_t> touched;
  if (auto s = perturb_inputs(inputs_, 1, &touched); !s) {
    harness_failure(s.error().message);
    return false;
  }
  call_no = job_.calls;
  CallReport perturbed = call(true, inputs_, candidate_out_, false);
  if (!gate_call(perturbed, "a few input values changed")) return false;
  CallReport perturbed_base = call(false, inputs_, baseline_first_, false);
  if (!gate_call(perturbed_base, "baseline")) return false;
  const std::string perturbed_phase = "after " + std::to_string(kPerturbedPerInput) +
                                      " elements of each input changed at the same addresses";
  if (!check_against_baseline(candidate_out_, baseline_first_, {&baseline_out_[0]},
                              poison_for_call(call_no), perturbed_phase, gate::kFreshInputs)) {
    return false;
  }
  tasks::ErrorStats perturbed_stats;
  if (!reference_check(inputs_, candidate_out_, poison_for_call(call_no), touched,
                       job_.seed ^ 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(index_),
                       perturbed_phase, gate::kCorrectness, &perturbed_stats)) {
    return false;
  }

  {
    TensorSet inputs2;
    TensorSet outputs2;
    TensorSet base2;
    const cudaStream_t hs = job_.env.harness_stream;
    Status s = inputs2.allocate(layout_, true, false, job_.env.guard_seed, &job_.next_band, hs);
    if (s) s = outputs2.allocate(layout_, false, true, job_.env.guard_seed, &job_.next_band, hs);
    if (s) s = base2.allocate(layout_, false, true, job_.env.guard_seed, &job_.next_band, hs);
    if (s) s = draw_inputs(inputs2, kDrawNewPointers);
    if (!s) {
      harness_failure(s.error().message);
      return false;
    }
    call_no = job_.calls;
    CallReport moved = call(true, inputs2, outputs2, false);
    if (!gate_call(moved, "new values at new addresses")) return false;
    CallReport moved_base = call(false, inputs2, base2, false);
    if (!gate_call(moved_base, "baseline")) return false;
    if (!check_against_baseline(outputs2, base2, {&baseline_first_, &baseline_out_[0]},
                                poison_for_call(call_no), "new values at new addresses",
                                gate::kFreshInputs)) {
      return false;
    }
  }
  job_.gates->pass(gate::kFreshInputs);

  // Work that shows up after everything returned (a background thread, a private stream).
  if (job_.env.recorder != nullptr) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    cudaDeviceSynchronize();
    CallReport tail;
    tail.owner = "harness";
    tail.records = job_.env.recorder->drain();
    std::vector<std::string> owners;
    const auto stray =
        ActivityAnalysis::stray_work(tail.records, windows_, job_.env.activity, &owners);
    std::vector<std::string> hidden;
    for (size_t i = 0; i < stray.size(); ++i) {
      if (owners[i] == "candidate") hidden.push_back(stray[i]);
    }
    for (const auto& c : ActivityAnalysis::foreign_thread_calls(tail.records, job_.env.activity))
      hidden.push_back(c);
    if (!hidden.empty()) {
      if (hidden.size() > 4) hidden.resize(4);
      fail(gate::kHiddenStreamWork,
           "after the calls: " + join(hidden) +
               "; enqueue all work on the stream passed to kiln_launch, from the calling thread");
      return false;
    }
  }
  return result_->passed;
}

bool WorkloadSession::timing_pass(const StoppingLimits& limits) {
  progress("timing: allocating");
  if (auto s = allocate(true); !s) {
    harness_failure(s.error().message);
    return false;
  }
  const StoppingCriterion criterion(limits);
  std::vector<double> candidate_us;
  std::vector<double> baseline_us;
  std::vector<double> event_us;
  int64_t discarded = 0;
  const auto start = std::chrono::steady_clock::now();
  StopReason reason = StopReason::kContinue;
  int64_t pair = 1;
  int last = 0;
  for (;; ++pair) {
    if (auto s = draw_inputs(inputs_, kDrawTimingBase + static_cast<uint64_t>(pair)); !s) {
      harness_failure(s.error().message);
      return false;
    }
    const int64_t call_no = job_.calls;
    const std::string phase = "timed sample " + std::to_string(pair);
    CallReport c = call(true, inputs_, candidate_out_, true);
    if (!gate_call(c, phase)) return false;
    last = static_cast<int>(pair & 1);
    CallReport b = call(false, inputs_, baseline_out_[last], true);
    if (!gate_call(b, "baseline")) return false;
    std::vector<const TensorSet*> earlier;
    if (pair > 1) earlier.push_back(&baseline_out_[last ^ 1]);
    if (!check_against_baseline(candidate_out_, baseline_out_[last], earlier,
                                poison_for_call(call_no), phase, gate::kCorrectness)) {
      return false;
    }
    bool keep = pair > kWarmupPairs;
    if (job_.nvml != nullptr && job_.nvml->available()) {
      const NvmlSample sample = job_.nvml->sample();
      for (const auto& name : ThrottlePolicy::names(sample.reasons)) {
        if (name != "gpu_idle") job_.gpu->throttle_reasons_seen.insert(name);
      }
      if (ThrottlePolicy::discards(sample.reasons)) {
        ++discarded;
        keep = false;
      } else if (keep && sample.ok) {
        job_.gpu->sm_clock_mhz.push_back(sample.sm_clock_mhz);
      }
    }
    if (keep) {
      candidate_us.push_back(c.span_us);
      baseline_us.push_back(b.span_us);
      event_us.push_back(c.event_us);
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    reason = criterion.decide({&candidate_us, &baseline_us}, elapsed);
    if (pair % 10 == 0) {
      progress("timing: " + std::to_string(candidate_us.size()) + " samples, noise " +
               std::to_string(StoppingCriterion::relative_noise(candidate_us)));
    }
    if (reason != StopReason::kContinue) break;
  }
  job_.gates->pass(gate::kCorrectness);
  job_.gpu->samples_discarded_throttled += discarded;
  result_->samples_discarded_throttled = discarded;
  result_->stop_reason = stop_reason_name(reason);
  if (candidate_us.empty()) {
    fail(gate::kCorrectness, "no usable timing samples (all " + std::to_string(discarded) +
                                 " were taken while the GPU was throttled); run the job again");
    return false;
  }
  result_->time_us = SampleStatistics::summarize(candidate_us);
  result_->baseline_time_us = SampleStatistics::summarize(baseline_us);
  result_->event_time_us = SampleStatistics::summarize(event_us);
  result_->speedup = result_->time_us->median > 0
                         ? result_->baseline_time_us->median / result_->time_us->median
                         : 0;
  std::string dtype;
  for (const auto& t : layout_.tensors) {
    if (!t.is_output) {
      dtype = tasks::dtype_name(t.dtype);
      break;
    }
  }
  result_->throughput = PeakTable::throughput(
      layout_.flops, layout_.bytes, result_->time_us->median * 1e-6, dtype, job_.gpu->peak);

  // After timing: a few inputs changed at the same addresses, against both references.
  progress("timing: final check");
  std::vector<int64_t> touched;
  if (auto s = perturb_inputs(inputs_, 2, &touched); !s) {
    harness_failure(s.error().message);
    return false;
  }
  const int64_t call_no = job_.calls;
  CallReport after = call(true, inputs_, candidate_out_, false);
  if (!gate_call(after, "after timing")) return false;
  CallReport after_base = call(false, inputs_, baseline_out_[last ^ 1], false);
  if (!gate_call(after_base, "baseline")) return false;
  const std::string phase = "after timing, with a few input values changed";
  if (!check_against_baseline(candidate_out_, baseline_out_[last ^ 1], {&baseline_out_[last]},
                              poison_for_call(call_no), phase, gate::kFreshInputs)) {
    return false;
  }
  tasks::ErrorStats stats;
  if (!reference_check(inputs_, candidate_out_, poison_for_call(call_no), touched,
                       job_.seed ^ 0x5851f42d4c957f2dull ^ static_cast<uint64_t>(index_), phase,
                       gate::kCorrectness, &stats)) {
    return false;
  }
  result_->extra["after_timing_errors"] = {
      {"max_abs", stats.max_abs}, {"max_rel", stats.max_rel}, {"mismatches", stats.mismatches}};
  return result_->passed;
}

}  // namespace kiln::worker
