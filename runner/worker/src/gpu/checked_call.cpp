#include "checked_call.h"

#include <chrono>
#include <thread>

#include "cuda_status.h"
#include "harness_kernels.h"
#include "kiln/tasks/numeric_codec.h"
#include "kiln/worker/timing_consistency.h"

namespace kiln::worker {

namespace {

// Waits for `done` (recorded after the call on its stream), then for the whole device.
// A kernel that never finishes cannot be recovered from: the caller reports and exits.
// The poll is tight at first and coarser as the wait grows, so a short call's end is seen
// within microseconds (the verifier's clock of the round trip stops soon after) and a long
// one does not keep a core busy: it yields for the first millisecond, then sleeps 20 us to
// 10 ms, then 200 us (a fraction of a percent of any call that long).
cudaError_t wait_for_device(cudaEvent_t done, double timeout_seconds, bool* hung) {
  const auto start = std::chrono::steady_clock::now();
  *hung = false;
  while (true) {
    const cudaError_t state = cudaEventQuery(done);
    if (state == cudaSuccess) break;
    if (state != cudaErrorNotReady) return state;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > timeout_seconds) {
      *hung = true;
      return cudaErrorNotReady;
    }
    if (waited < 1e-3)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(waited < 0.01 ? 20 : 200));
  }
  return cudaDeviceSynchronize();
}

}  // namespace

Result<std::vector<uint64_t>> input_checksums(const CallEnvironment& env,
                                              const tasks::WorkloadLayout& layout,
                                              const TensorSet& inputs) {
  std::vector<uint64_t> sums(layout.tensors.size(), 0);
  const int count =
      static_cast<int>(std::min<size_t>(layout.tensors.size(), HarnessScratch::kMaxSums));
  if (auto s = cuda_ok(cudaMemsetAsync(env.scratch->sums(), 0, sizeof(unsigned long long) * count,
                                       env.harness_stream),
                       "checksum reset");
      !s) {
    return s.error();
  }
  for (int t = 0; t < count; ++t) {
    const GuardedBuffer* buffer = inputs.at(static_cast<size_t>(t));
    if (layout.tensors[static_cast<size_t>(t)].is_output || buffer == nullptr) continue;
    if (auto s = cuda_ok(launch_checksum(buffer->data(), buffer->bytes(), env.scratch->sums() + t,
                                         env.harness_stream),
                         "checksum");
        !s) {
      return s.error();
    }
  }
  std::vector<unsigned long long> host(static_cast<size_t>(count), 0);
  if (auto s = cuda_ok(
          cudaMemcpyAsync(host.data(), env.scratch->sums(), sizeof(unsigned long long) * count,
                          cudaMemcpyDeviceToHost, env.harness_stream),
          "checksum read");
      !s) {
    return s.error();
  }
  if (auto s = cuda_ok(cudaStreamSynchronize(env.harness_stream), "checksum"); !s) return s.error();
  for (int t = 0; t < count; ++t) sums[static_cast<size_t>(t)] = host[static_cast<size_t>(t)];
  return sums;
}

Result<std::vector<uint64_t>> prepare_call(const CallEnvironment& env,
                                           const tasks::WorkloadLayout& layout,
                                           const CallRequest& request) {
  const cudaStream_t hs = env.harness_stream;
  auto before = input_checksums(env, layout, *request.inputs);
  if (!before) return before.error();
  size_t output_index = 0;
  for (size_t t = 0; t < layout.tensors.size(); ++t) {
    if (!layout.tensors[t].is_output) continue;
    const GuardedBuffer* out = request.outputs->at(t);
    const uint64_t pattern =
        output_index < request.poison.size() ? request.poison[output_index] : 0;
    ++output_index;
    if (out == nullptr) continue;
    const cudaError_t e =
        launch_fill_pattern(out->data(), layout.tensors[t].elements(),
                            tasks::dtype_size(layout.tensors[t].dtype), pattern, hs);
    if (e != cudaSuccess)
      return make_error(describe_cuda(e, "poisoning " + layout.tensors[t].name));
  }
  if (auto s = cuda_ok(cudaStreamSynchronize(hs), "harness stream"); !s) return s.error();
  return before;
}

namespace {

// The harness's own markers in the window's records: the runtime call that records the stop
// event (made by the harness thread after kiln_launch returned) and, in a gated call, the
// hold kernel on the launch stream. Missing ones mean CUPTI stopped recording in the call.
std::string missing_markers(const std::vector<ActivityRecord>& records, const CallWindow& window,
                            const ActivityContext& context) {
  bool api_after = false;
  bool hold = !window.gated;
  for (const auto& r : records) {
    if (r.kind == ActivityRecord::Kind::kRuntimeApi && r.start >= window.launch_end &&
        context.harness_threads.count(r.thread_id) != 0)
      api_after = true;
    if (r.kind == ActivityRecord::Kind::kKernel && r.stream_id == context.launch_stream &&
        r.name.find("kiln_harness_hold") != std::string::npos)
      hold = true;
  }
  if (api_after && hold) return "";
  return std::string("the activity record lost the harness's own ") +
         (!api_after ? "runtime calls" : "launch-gate kernel") +
         " during the call: something stopped CUPTI recording, so the call's work was not all seen";
}

}  // namespace

Status settle_harness(const CallEnvironment& env, bool timed) {
  if (timed && env.flush != nullptr) {
    if (auto s = env.flush->enqueue(env.harness_stream); !s) return s;
  }
  return cuda_ok(cudaStreamSynchronize(env.harness_stream), "harness stream");
}

void run_call_window(const CallEnvironment& env, kiln_launch_fn launch,
                     const std::vector<kiln_tensor>& tensors,
                     const std::vector<kiln_scalar>& scalars, bool timed, CallReport* report) {
  const cudaStream_t hs = env.harness_stream;
  auto harness_broke = [&](const std::string& message) {
    report->harness_error = message;
    report->fatal = true;
  };
  if (auto s = settle_harness(env, timed); !s) return harness_broke(s.error().message);
  // Records from before the window (stray work of an earlier call) go to the caller too.
  std::vector<ActivityRecord> early;
  if (env.recorder != nullptr) early = env.recorder->drain();

  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  report->window.owner = report->owner;
  report->window.open = env.recorder != nullptr ? env.recorder->now() : 0;
  const bool gated = timed && env.gate != nullptr && env.gate->enabled(report->owner);
  report->window.gated = gated;
  cudaEvent_t probed = nullptr;  // gated: the tail probe's end, on the harness stream
  bool filled = true;
  if (gated) {
    cudaEventCreate(&probed);
    if (auto s = env.gate->hold(env.launch_stream, &filled); !s)
      return harness_broke(s.error().message);
  }
  cudaEventRecord(start, env.launch_stream);
  report->window.launch_begin = env.recorder != nullptr ? env.recorder->now() : 0;
  report->status = launch(tensors.data(), static_cast<int>(tensors.size()), scalars.data(),
                          static_cast<int>(scalars.size()), env.launch_stream);
  report->window.launch_end = env.recorder != nullptr ? env.recorder->now() : 0;
  const cudaError_t launch_error = cudaGetLastError();
  // Gated, the stop event and the tail probe are enqueued while the hold still has the GPU, so
  // the events time the GPU work alone, not the host's way back from kiln_launch.
  cudaEventRecord(stop, env.launch_stream);
  if (gated) {
    if (auto s = env.gate->probe_tail(stop, hs, probed); !s) {
      env.gate->release();
      return harness_broke(s.error().message);
    }
    env.gate->release();
  }
  const cudaError_t wait_error =
      wait_for_device(gated ? probed : stop, env.hang_timeout_seconds, &report->hung);
  if (env.gpu_done) env.gpu_done();
  report->window.close = env.recorder != nullptr ? env.recorder->now() : 0;
  if (report->hung) {
    report->cuda_error = "the " + report->owner + "'s work did not finish within " +
                         std::to_string(static_cast<int>(env.hang_timeout_seconds)) +
                         " s (a hang or deadlock)";
    report->fatal = true;
    return;  // the context cannot be used again; events are left to the process exit
  }
  const cudaError_t after_error = cudaGetLastError();
  cudaError_t error = launch_error != cudaSuccess
                          ? launch_error
                          : (wait_error != cudaSuccess ? wait_error : after_error);
  if (error != cudaSuccess) {
    report->cuda_error = describe_cuda(error, report->owner + "'s kiln_launch");
    report->fatal = is_sticky(error) || is_sticky(wait_error);
  }
  float ms = 0;
  if (!report->fatal && cudaEventElapsedTime(&ms, start, stop) == cudaSuccess)
    report->event_us = ms * 1e3;
  float tail_ms = 0;
  if (gated && !report->fatal && cudaEventElapsedTime(&tail_ms, stop, probed) == cudaSuccess)
    report->tail_us = tail_ms * 1e3;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (probed != nullptr) cudaEventDestroy(probed);
  if (report->fatal) return;
  // Whatever the call changed of the device's settings is put back before anything else runs.
  if (env.device_state != nullptr)
    report->device_state_changes = env.device_state->restore(env.launch_stream);

  report->activity = env.recorder != nullptr;
  if (env.recorder != nullptr) {
    report->records = std::move(early);
    std::vector<ActivityRecord> window = env.recorder->drain();
    report->activity_problem = missing_markers(window, report->window, env.activity);
    env.recorder->keep_enabled();
    report->records.insert(report->records.end(), std::make_move_iterator(window.begin()),
                           std::make_move_iterator(window.end()));
    report->findings = ActivityAnalysis::analyze(report->records, report->window, env.activity);
    report->span_us = static_cast<double>(report->findings.span_ns) / 1e3;
  } else {
    report->span_us = report->event_us;
  }
  // Gated calls are timed twice more, by clocks CUPTI's switches do not reach: the events on
  // the launch stream and the tail probe (timing_consistency.h).
  if (gated && !env.gate->timed_out()) {
    TimingEvidence evidence;
    evidence.event_us = report->event_us;
    evidence.tail_us = report->tail_us;
    evidence.filled = filled;
    evidence.probe_timed_out = env.gate->probe_timed_out();
    evidence.recorded = env.recorder != nullptr && report->activity_problem.empty();
    evidence.span_us = report->span_us;
    evidence.gpu_records = report->findings.gpu_records;
    const TimingVerdict verdict = judge_timing(evidence);
    if (!verdict.unrecorded_work.empty() && report->activity_problem.empty())
      report->activity_problem = verdict.unrecorded_work;
    for (const auto& v : verdict.unseen_work) report->findings.violations.push_back(v);
  }
  if (gated && env.gate->timed_out()) {
    // kiln_launch waited for the GPU while the gate held it: stop gating this owner's calls
    // (only this owner's: the other's samples stay gated).
    env.gate->disable(report->owner);
    report->waited_in_call = true;
    report->findings.notes.push_back(
        report->owner +
        "'s kiln_launch waited for the GPU inside the call (a stream or device "
        "synchronize, or a synchronous copy), so the launch gate was given up after " +
        std::to_string(LaunchGate::kTimeoutNs / 1'000'000) +
        " ms; its later samples are timed with the host's launch gaps included");
  }
}

void finish_call(const CallEnvironment& env, const tasks::WorkloadLayout& layout,
                 const CallRequest& request, const std::vector<uint64_t>& before,
                 CallReport* report) {
  auto after = input_checksums(env, layout, *request.inputs);
  if (!after) {
    report->harness_error = after.error().message;
    report->fatal = true;
    return;
  }
  for (size_t t = 0; t < layout.tensors.size(); ++t) {
    if (!layout.tensors[t].is_output && before[t] != (*after)[t])
      report->changed_inputs.push_back(layout.tensors[t].name);
  }
  for (size_t t = 0; t < layout.tensors.size(); ++t) {
    const TensorSet& set = layout.tensors[t].is_output ? *request.outputs : *request.inputs;
    const GuardedBuffer* buffer = set.at(t);
    if (buffer == nullptr) continue;
    auto damage = buffer->check_guards(env.scratch->guards(), env.harness_stream);
    if (!damage) {
      report->harness_error = damage.error().message;
      report->fatal = true;
      return;
    }
    if (!damage->intact())
      report->guard_damage.push_back(GuardBand::describe(*damage, layout.tensors[t].name));
  }
}

CallReport run_checked_call(const CallEnvironment& env, const tasks::WorkloadLayout& layout,
                            const CallRequest& request) {
  CallReport report;
  report.owner = request.owner;
  auto before = prepare_call(env, layout, request);
  if (!before) {
    report.harness_error = before.error().message;
    report.fatal = true;
    return report;
  }
  std::vector<void*> pointers = call_pointers(layout, *request.inputs, *request.outputs);
  run_call_window(env, request.launch, layout.abi_tensors(pointers), layout.abi_scalars(),
                  request.timed, &report);
  if (report.fatal) return report;
  finish_call(env, layout, request, *before, &report);
  return report;
}

}  // namespace kiln::worker
