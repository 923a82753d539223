// The session itself: its buffers, input draws and perturbations, and one call with its
// poison; failures recorded against the workload. The passes and checks are beside it
// (workload_session.h lists the files).
#include "workload_session.h"

#include <algorithm>
#include <cstring>

#include "cuda_status.h"
#include "harness_kernels.h"
#include "kiln/base/text.h"
#include "kiln/tasks/hash_mix.h"
#include "kiln/tasks/numeric_codec.h"
#include "kiln/tasks/poison_pattern.h"

namespace kiln::worker {

namespace {

constexpr uint64_t kPurposeInput = 0x696e707574ull;    // "input"
constexpr uint64_t kPurposePerturb = 0x7065727475ull;  // "pertu"

}  // namespace

WorkloadSession::WorkloadSession(JobContext& job, tasks::WorkloadLayout layout, int index,
                                 int total, WorkloadResult* result)
    : job_(job), layout_(std::move(layout)), index_(index), total_(total), result_(result) {}

void WorkloadSession::fail(std::string_view gate, const std::string& detail) {
  if (judging_incumbent_) {
    if (incumbent_failure_.empty()) incumbent_failure_ = std::string(gate) + ": " + detail;
    return;
  }
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
  // Before the old sets are freed.
  if (job_.candidate != nullptr) job_.candidate->release_all();
  if (job_.incumbent != nullptr) job_.incumbent->release_all();
  drawn_.clear();
  if (auto s = upload_row_masks(); !s) return s;
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
  reference_out_ = TensorSet();
  if (job_.gpu_reference != nullptr) {
    if (auto s =
            reference_out_.allocate(layout_, false, true, job_.env.guard_seed, &job_.next_band, hs);
        !s)
      return s;
  }
  incumbent_out_ = TensorSet();
  sealed_incumbent_ = TensorSet();
  if (timing && job_.incumbent != nullptr) {
    if (auto s =
            incumbent_out_.allocate(layout_, false, true, job_.env.guard_seed, &job_.next_band, hs);
        !s)
      return s;
    if (auto s = sealed_incumbent_.allocate(layout_, false, true, job_.env.guard_seed,
                                            &job_.next_band, hs);
        !s)
      return s;
  }
  sealed_candidate_ = TensorSet();
  if (timing) {
    if (auto s = sealed_candidate_.allocate(layout_, false, true, job_.env.guard_seed,
                                            &job_.next_band, hs);
        !s)
      return s;
    baseline_first_ = TensorSet();
    return baseline_out_[1].allocate(layout_, false, true, job_.env.guard_seed, &job_.next_band,
                                     hs);
  }
  baseline_out_[1] = TensorSet();
  return baseline_first_.allocate(layout_, false, true, job_.env.guard_seed, &job_.next_band, hs);
}

Status WorkloadSession::upload_row_masks() {
  if (!row_masks_.empty()) return Ok{};
  row_masks_.resize(layout_.tensors.size());
  for (size_t t = 0; t < layout_.tensors.size(); ++t) {
    const tasks::TensorLayout& tensor = layout_.tensors[t];
    if (!tensor.is_output || tensor.ignored_rows.empty()) continue;
    auto mask = std::make_unique<GuardedBuffer>();
    const auto bytes = static_cast<int64_t>(tensor.ignored_rows.size());
    if (auto s = mask->allocate(bytes, job_.env.guard_seed, job_.next_band,
                                tensor.name + "'s ignored rows");
        !s)
      return s;
    job_.next_band += 2;
    if (auto s = cuda_ok(cudaMemcpy(mask->data(), tensor.ignored_rows.data(),
                                    static_cast<size_t>(bytes), cudaMemcpyHostToDevice),
                         "uploading " + tensor.name + "'s ignored rows");
        !s)
      return s;
    row_masks_[t] = std::move(mask);
  }
  return Ok{};
}

Status WorkloadSession::draw_inputs(TensorSet& inputs, uint64_t draw) {
  const ScopedSeconds timed(wall(&WallTime::inputs_s));
  const uint64_t draw_id = (static_cast<uint64_t>(index_) << 40) | draw;
  for (size_t t = 0; t < layout_.tensors.size(); ++t) {
    const tasks::TensorLayout& tensor = layout_.tensors[t];
    GuardedBuffer* buffer = inputs.at(t);
    if (tensor.is_output || buffer == nullptr) continue;
    if (!tensor.fixed_bytes.empty()) {
      // Fixed by the dims (a group_index): the same values in every draw.
      if (auto s = cuda_ok(
              cudaMemcpyAsync(buffer->data(), tensor.fixed_bytes.data(), tensor.fixed_bytes.size(),
                              cudaMemcpyHostToDevice, job_.env.harness_stream),
              "uploading " + tensor.name);
          !s) {
        return s;
      }
      continue;
    }
    const uint64_t key = tasks::stream_key(job_.seed, kPurposeInput, t, draw_id);
    if (auto s = cuda_ok(launch_draw_uniform(buffer->data(), tensor.elements(), tensor.dtype,
                                             tensor.distribution.low, tensor.distribution.high, key,
                                             job_.env.harness_stream),
                         "drawing " + tensor.name);
        !s) {
      return s;
    }
  }
  if (auto s = cuda_ok(cudaStreamSynchronize(job_.env.harness_stream), "drawing inputs"); !s)
    return s;
  return record_drawn(inputs);
}

Status WorkloadSession::record_drawn(const TensorSet& inputs) {
  auto sums = input_checksums(job_.env, layout_, inputs);
  if (!sums) return sums.error();
  for (auto& [set, recorded] : drawn_) {
    if (set == &inputs) {
      recorded = std::move(*sums);
      return Ok{};
    }
  }
  drawn_.emplace_back(&inputs, std::move(*sums));
  return Ok{};
}

std::vector<std::string> WorkloadSession::changed_since_drawn(
    const TensorSet& inputs, const std::vector<uint64_t>& now) const {
  std::vector<std::string> changed;
  for (const auto& [set, recorded] : drawn_) {
    if (set != &inputs) continue;
    for (size_t t = 0; t < layout_.tensors.size() && t < recorded.size() && t < now.size(); ++t) {
      if (!layout_.tensors[t].is_output && recorded[t] != now[t])
        changed.push_back(layout_.tensors[t].name);
    }
  }
  return changed;
}

bool WorkloadSession::inputs_as_drawn(const TensorSet& inputs, const std::string& phase) {
  auto now = input_checksums(job_.env, layout_, inputs);
  if (!now) {
    harness_failure(now.error().message);
    return false;
  }
  const std::vector<std::string> changed = changed_since_drawn(inputs, *now);
  if (changed.empty()) return true;
  fail(gate::kInputChecksum,
       phase + ": input " + join(changed, ", ") +
           " changed after the harness drew it and between the calls (a background thread or "
           "stream of the candidate wrote it); inputs are read-only, at all times");
  return false;
}

Status WorkloadSession::perturb_inputs(TensorSet& inputs, uint64_t salt,
                                       std::vector<int64_t>* touched_rows) {
  const ScopedSeconds timed(wall(&WallTime::inputs_s));
  const std::vector<bool> sliced = tasks::RowSampler::sliced_tensors(layout_);
  const cudaStream_t hs = job_.env.harness_stream;
  for (size_t t = 0; t < layout_.tensors.size(); ++t) {
    const tasks::TensorLayout& tensor = layout_.tensors[t];
    GuardedBuffer* buffer = inputs.at(t);
    // A group_index is the problem's layout, not a value to vary: it stays as the dims fix it.
    if (tensor.is_output || buffer == nullptr || !tensor.fixed_bytes.empty()) continue;
    const int64_t n = tensor.elements();
    const int size = tasks::dtype_size(tensor.dtype);
    const uint64_t key = tasks::stream_key(job_.seed, kPurposePerturb, t,
                                           (static_cast<uint64_t>(index_) << 40) | salt);
    const int64_t count = std::min<int64_t>(kPerturbedPerInput, n);
    // Only the chosen elements travel: their old bits down, their new bits up.
    std::vector<int64_t> positions(static_cast<size_t>(count));
    std::vector<uint64_t> bits(static_cast<size_t>(count), 0);
    auto* base = static_cast<unsigned char*>(buffer->data());
    for (int64_t j = 0; j < count; ++j) {
      positions[j] = static_cast<int64_t>(tasks::unit_draw(key, static_cast<uint64_t>(2 * j)) *
                                          static_cast<double>(n));
      if (auto s = cuda_ok(cudaMemcpyAsync(&bits[j], base + positions[j] * size,
                                           static_cast<size_t>(size), cudaMemcpyDeviceToHost, hs),
                           "reading " + tensor.name + " to perturb it");
          !s)
        return s;
    }
    if (auto s = cuda_ok(cudaStreamSynchronize(hs), "reading inputs to perturb them"); !s) return s;
    for (int64_t j = 0; j < count; ++j) {
      const uint64_t old_bits = bits[j];
      uint64_t changed = old_bits;
      for (int attempt = 0; attempt < 8 && changed == old_bits; ++attempt) {
        const double u = tasks::unit_draw(key, static_cast<uint64_t>(2 * j + 1 + 1000 * attempt));
        changed = tasks::encode(
            tensor.dtype,
            tensor.distribution.low + (tensor.distribution.high - tensor.distribution.low) * u);
      }
      if (changed == old_bits)
        changed ^= tasks::dtype_is_float(tensor.dtype) ? (uint64_t{1} << (8 * size - 1)) : 1;
      bits[j] = changed;
      if (auto s = cuda_ok(cudaMemcpyAsync(base + positions[j] * size, &bits[j],
                                           static_cast<size_t>(size), cudaMemcpyHostToDevice, hs),
                           "uploading perturbed " + tensor.name);
          !s)
        return s;
      if (sliced[t]) touched_rows->push_back(positions[j] / (n / tensor.shape[0]));
    }
    // `bits` must outlive the copies.
    if (auto s = cuda_ok(cudaStreamSynchronize(hs), "uploading perturbed inputs"); !s) return s;
  }
  return record_drawn(inputs);
}

Status WorkloadSession::keep_outputs(const TensorSet& outputs, TensorSet* kept) {
  *kept = TensorSet();
  if (auto s = kept->allocate(layout_, false, true, job_.env.guard_seed, &job_.next_band,
                              job_.env.harness_stream);
      !s)
    return s;
  return copy_outputs(outputs, *kept);
}

Status WorkloadSession::copy_outputs(const TensorSet& from, const TensorSet& to) {
  const cudaStream_t hs = job_.env.harness_stream;
  for (size_t t = 0; t < layout_.tensors.size(); ++t) {
    const GuardedBuffer* source = from.at(t);
    GuardedBuffer* target = to.at(t);
    if (!layout_.tensors[t].is_output || source == nullptr || target == nullptr) continue;
    if (auto s = cuda_ok(
            cudaMemcpyAsync(target->data(), source->data(), static_cast<size_t>(source->bytes()),
                            cudaMemcpyDeviceToDevice, hs),
            "copying " + layout_.tensors[t].name);
        !s)
      return s;
  }
  return cuda_ok(cudaStreamSynchronize(hs), "copying outputs");
}

CallReport WorkloadSession::call(Caller caller, const TensorSet& inputs, const TensorSet& outputs,
                                 bool timed, const TensorSet* seal) {
  const bool hosted = caller != Caller::kBaseline;
  CallRequest request;
  request.launch = job_.baseline;
  request.owner = caller == Caller::kCandidate   ? "candidate"
                  : caller == Caller::kIncumbent ? "incumbent"
                                                 : "baseline";
  request.inputs = &inputs;
  request.outputs = &outputs;
  request.poison = poison_for_call(hosted ? job_.calls++ : 0);
  request.timed = timed;
  CallReport report;
  if (hosted) {
    const ScopedSeconds timed_call(wall(&WallTime::candidate_calls_s));
    report = hosted_call(request, caller == Caller::kCandidate ? *job_.candidate : *job_.incumbent,
                         seal);
  } else {
    const ScopedSeconds timed_call(wall(&WallTime::baseline_calls_s));
    auto now = input_checksums(job_.env, layout_, inputs);
    if (!now) {
      report.owner = request.owner;
      report.harness_error = now.error().message;
      report.fatal = true;
      return report;
    }
    report = run_checked_call(job_.env, layout_, request);
    report.changed_before_call = changed_since_drawn(inputs, *now);
  }
  if (job_.wall != nullptr) {
    job_.wall->gpu_busy_s += report.span_us * 1e-6;
    ++job_.wall->calls;
  }
  return report;
}

CallReport WorkloadSession::hosted_call(const CallRequest& request, CandidateHost& host,
                                        const TensorSet* seal) {
  // The window runs in the host; the checks before and after it run here, on the verifier's
  // own view of the buffers, and so does a timed call's L2 flush: in the host's memory a
  // candidate could skip it.
  CallReport report;
  report.owner = request.owner;
  auto harness_broke = [&](const std::string& message) {
    report.harness_error = message;
    report.fatal = true;
    return report;
  };
  auto before = prepare_call(job_.env, layout_, request);
  if (!before) return harness_broke(before.error().message);
  report.changed_before_call = changed_since_drawn(*request.inputs, *before);
  if (request.timed) {
    if (auto s = settle_harness(job_.env, true); !s) return harness_broke(s.error().message);
  }
  std::string seal_error;
  std::function<void()> at_ran;
  if (seal != nullptr) {
    at_ran = [&] {
      if (auto s = copy_outputs(*request.outputs, *seal); !s) seal_error = s.error().message;
    };
  }
  host.call(layout_, *request.inputs, *request.outputs, request.timed, at_ran, &report);
  if (!seal_error.empty()) return harness_broke("sealing the outputs: " + seal_error);
  if (!report.fatal) finish_call(job_.env, layout_, request, *before, &report);
  return report;
}

bool WorkloadSession::judge_incumbent(const std::function<bool()>& check) {
  incumbent_failure_.clear();
  judging_incumbent_ = true;
  const bool ok = check();
  judging_incumbent_ = false;
  if (ok && incumbent_failure_.empty()) return true;
  if (!incumbent_failure_.empty()) {
    job_.fatal_error.clear();  // a failed incumbent call may have marked the job the candidate's
    harness_failure("the incumbent (the frontier's best, timed beside the candidate) failed " +
                    incumbent_failure_ +
                    "; the comparison cannot be made: nothing is said about the candidate");
  }
  return false;
}

Status WorkloadSession::host_copy(const TensorSet& set, bool outputs, tasks::HostTensors* host) {
  const ScopedSeconds timed(wall(&WallTime::host_copies_s));
  host->resize(layout_.tensors.size());
  for (size_t t = 0; t < layout_.tensors.size(); ++t) {
    const GuardedBuffer* buffer = set.at(t);
    if (layout_.tensors[t].is_output != outputs || buffer == nullptr) continue;
    if (auto s = job_.env.scratch->copy_to_host(buffer->data(), buffer->bytes(), &(*host)[t],
                                                job_.env.harness_stream);
        !s)
      return s;
  }
  return Ok{};
}

}  // namespace kiln::worker
