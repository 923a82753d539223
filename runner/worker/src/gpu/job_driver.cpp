#include "kiln/worker/job_driver.h"

#include <chrono>
#include <cstdlib>

#include "activity_recorder.h"
#include "cuda_status.h"
#include "device_info.h"
#include "harness_kernels.h"
#include "kiln/base/sha256.h"
#include "kiln/compiler/kernel_build.h"
#include "kiln/tasks/hash_mix.h"
#include "kiln/tasks/task.h"
#include "kiln/worker/dynamic_library.h"
#include "kiln/worker/event_stream.h"
#include "kiln/worker/nvml_probe.h"
#include "kiln/worker/worker_result.h"
#include "l2_flush.h"
#include "launch_gate.h"
#include "tool_jobs.h"
#include "workload_session.h"

namespace kiln::worker {

namespace {

using Clock = std::chrono::steady_clock;

bool integrity_gate(const std::string& gate) {
  return gate != gate::kCorrectness && gate != gate::kDeterminism;
}

std::string next_step(const std::string& gate) {
  if (gate == gate::kBannedSymbols) return "remove the banned calls";
  if (gate == gate::kCorrectness)
    return "fix the kernel's arithmetic or indexing for the failing workload";
  if (gate == gate::kPoisonedOutputs) return "make every thread write its outputs on every call";
  if (gate == gate::kFreshInputs)
    return "compute every call from its current inputs; cache nothing";
  if (gate == gate::kInputChecksum) return "never write to input tensors";
  if (gate == gate::kGuardBands) return "bound-check every store against the output's extents";
  if (gate == gate::kDeterminism) return "look for a race or an uninitialized read";
  if (gate == gate::kHiddenStreamWork) return "use only the given stream, from the calling thread";
  if (gate == gate::kCudaErrors)
    return "check every CUDA call and launch (compute-sanitizer memcheck helps)";
  return "see the gate's detail";
}

// Learns the CUPTI ids of the harness's streams and its own host thread: a marker kernel on
// each stream, then the records they left.
Status learn_activity_ids(ActivityRecorder& recorder, cudaStream_t launch, cudaStream_t harness,
                          HarnessScratch& scratch, ActivityContext* context) {
  recorder.drain();
  for (int which = 0; which < 2; ++which) {
    const cudaStream_t stream = which == 0 ? launch : harness;
    if (auto s = cuda_ok(launch_fill_pattern(scratch.sums(), 1, 8, 0, stream), "marker kernel"); !s)
      return s;
    if (auto s = cuda_ok(cudaStreamSynchronize(stream), "marker kernel"); !s) return s;
    bool found = false;
    for (const auto& r : recorder.drain()) {
      if (r.kind == ActivityRecord::Kind::kKernel &&
          r.name.find("kiln_harness_fill_pattern") != std::string::npos) {
        if (which == 0) {
          context->launch_stream = r.stream_id;
        } else {
          context->harness_streams.insert(r.stream_id);
        }
        found = true;
      } else if (!r.is_gpu()) {
        context->harness_threads.insert(r.thread_id);
      }
    }
    if (!found) return make_error("CUPTI recorded no kernel for the harness's marker launch");
  }
  return Ok{};
}

}  // namespace

int run_job(const JobSpec& spec, const WorkerOptions& options, std::ostream& out, bool* fatal) {
  const auto started = Clock::now();
  *fatal = false;
  EventStream events(out);
  WorkerResult result;
  result.kind = job_kind_name(spec.kind);
  auto finish = [&](const std::string& status, const std::string& error) {
    result.status = status;
    result.stage = status == "passed" ? "done" : events.last_stage();
    result.error = error;
    events.stage("done");
    events.result(result.to_json());
    return 0;
  };

  events.stage("build");
  auto task = tasks::load_task(spec.task_dir);
  if (!task) return finish("error", "cannot load the task bundle: " + task.error().message);
  result.task_name = task->name;
  result.task_sha256 = task->sha256;
  result.task_workload_count = static_cast<int>(task->workloads.size());
  auto candidate_hash = sha256_file(spec.candidate);
  if (!candidate_hash)
    return finish("error", "cannot read the candidate: " + candidate_hash.error().message);
  result.candidate_sha256 = *candidate_hash;

  std::vector<tasks::Workload> workloads;
  if (spec.workloads.empty()) {
    workloads = task->workloads;
  } else {
    for (const auto& name : spec.workloads) {
      auto w = tasks::find_workload(*task, name);
      if (!w) return finish("error", w.error().message);
      workloads.push_back(*w);
    }
  }
  result.job_workload_count = static_cast<int>(workloads.size());

  const compiler::KernelBuild builder(
      compiler::BuildToolchain::from_environment(options.executable));
  compiler::BuildRequest candidate_request;
  candidate_request.kind = compiler::BuildKind::kCandidate;
  candidate_request.source = spec.candidate;
  candidate_request.build_dir = spec.build_dir;
  candidate_request.arch = task->arch;
  candidate_request.banned_prefixes = task->banned_symbols;
  events.log("info", "building the candidate for " + task->arch);
  const compiler::BuildOutcome candidate_build = builder.build(candidate_request);
  result.build = candidate_build;
  if (!candidate_build.ok) {
    if (!candidate_build.banned.empty()) {
      result.gates.fail(gate::kBannedSymbols, "",
                        compiler::BannedSymbols::describe(candidate_build.banned));
    }
    return finish("failed", candidate_build.error);
  }
  result.gates.pass(gate::kBannedSymbols);

  const std::filesystem::path cache_root = spec.build_dir.parent_path();
  compiler::BuildRequest baseline_request;
  baseline_request.kind = compiler::BuildKind::kBaseline;
  baseline_request.source = task->baseline_path;
  baseline_request.arch = task->arch;
  baseline_request.libraries = task->baseline_libraries;
  baseline_request.build_dir =
      cache_root / ("baseline-" + builder.fingerprint(baseline_request).substr(0, 24));
  events.log("info", "building the baseline (cached per task)");
  const compiler::BuildOutcome baseline_build = builder.build(baseline_request);
  if (!baseline_build.ok)
    return finish("error", "the task's baseline does not build: " + baseline_build.error);
  compiler::BuildRequest reference_request;
  reference_request.kind = compiler::BuildKind::kReference;
  reference_request.source = task->reference_path;
  reference_request.build_dir =
      cache_root / ("reference-" + builder.fingerprint(reference_request).substr(0, 24));
  const compiler::BuildOutcome reference_build = builder.build(reference_request);
  if (!reference_build.ok)
    return finish("error", "the task's CPU reference does not build: " + reference_build.error);
  if (options.build_only) {
    result.notes.push_back("build only: nothing was run");
    return finish("passed", "");
  }

  if (spec.kind == JobKind::kProfile || spec.kind == JobKind::kSanitize) {
    ToolJobInput input{spec, options, *task, workloads, started};
    if (spec.kind == JobKind::kProfile) {
      events.stage("profile");
      run_profile(input, events, &result);
    } else {
      events.stage("sanitize");
      run_sanitize(input, events, &result);
    }
    return finish(result.status, result.error);
  }

  events.stage("load");
  auto candidate_library = DynamicLibrary::open(candidate_build.library);
  if (!candidate_library) return finish("failed", candidate_library.error().message);
  auto candidate_fn = candidate_library->symbol("kiln_launch");
  if (!candidate_fn) return finish("failed", candidate_fn.error().message);
  auto baseline_library = DynamicLibrary::open(baseline_build.library);
  if (!baseline_library)
    return finish("error",
                  "the task's baseline does not load: " + baseline_library.error().message);
  auto baseline_fn = baseline_library->symbol("kiln_launch");
  if (!baseline_fn) return finish("error", baseline_fn.error().message);
  auto reference_library = DynamicLibrary::open(reference_build.library);
  if (!reference_library)
    return finish("error",
                  "the task's reference does not load: " + reference_library.error().message);
  auto reference_fn = reference_library->symbol("kiln_reference");
  if (!reference_fn) return finish("error", reference_fn.error().message);

  ActivityRecorder recorder;
  const Status cupti = recorder.start();
  if (!cupti)
    result.notes.push_back("CUPTI unavailable (" + cupti.error().message +
                           "): times come from CUDA events and hidden_stream_work is not checked");
  auto gpu = open_device(options.gpu);
  if (!gpu) return finish("error", gpu.error().message);
  NvmlProbe nvml;
  if (nvml.open(gpu->pci_bus_id, static_cast<unsigned>(options.gpu))) {
    gpu->nvml = true;
    const std::string driver = nvml.driver_version();
    if (!driver.empty()) gpu->driver = driver;
  }
  gpu->nvml_note = nvml.note();
  std::filesystem::path hw_dir = options.hw_dir;
  if (hw_dir.empty()) {
    if (const char* env = std::getenv("KILN_HW_DIR")) hw_dir = env;
  }
  gpu->peak = PeakTable::lookup(gpu->name, hw_dir);
  result.gpu = *gpu;
  GpuInfo& gpu_info = *result.gpu;

  cudaStream_t launch_stream = nullptr;
  cudaStream_t harness_stream = nullptr;
  L2Flush flush;
  LaunchGate launch_gate;
  HarnessScratch scratch;
  Status setup =
      cuda_ok(cudaStreamCreateWithFlags(&launch_stream, cudaStreamNonBlocking), "cudaStreamCreate");
  if (setup)
    setup = cuda_ok(cudaStreamCreateWithFlags(&harness_stream, cudaStreamNonBlocking),
                    "cudaStreamCreate");
  if (setup) setup = flush.init(gpu_info.l2_bytes);
  if (setup) setup = launch_gate.init();
  if (setup) setup = scratch.init();
  if (!setup) return finish("error", setup.error().message);

  JobContext job;
  job.task = &*task;
  job.env.launch_stream = launch_stream;
  job.env.harness_stream = harness_stream;
  job.env.flush = &flush;
  job.env.gate = &launch_gate;
  job.env.scratch = &scratch;
  job.env.guard_seed = tasks::mix64(spec.seed ^ 0x6775617264ull);
  if (recorder.running()) {
    if (auto s =
            learn_activity_ids(recorder, launch_stream, harness_stream, scratch, &job.env.activity);
        s) {
      job.env.recorder = &recorder;
    } else {
      result.notes.push_back(
          "CUPTI did not see the harness's marker kernels (" + s.error().message +
          "): times come from CUDA events and hidden_stream_work is not checked");
    }
  }
  job.candidate = reinterpret_cast<kiln_launch_fn>(*candidate_fn);
  job.baseline = reinterpret_cast<kiln_launch_fn>(*baseline_fn);
  job.reference = reinterpret_cast<kiln_reference_fn>(*reference_fn);
  job.tolerance = task->tolerance;
  job.baseline_tolerance = {2 * task->tolerance.atol, 2 * task->tolerance.rtol, 0};
  job.seed = spec.seed;
  job.gates = &result.gates;
  job.events = &events;
  job.nvml = &nvml;
  job.gpu = &gpu_info;

  const double reserve = std::max(10.0, 0.05 * spec.limits.job_seconds);
  const auto deadline = started + std::chrono::duration<double>(spec.limits.job_seconds - reserve);
  auto seconds_left = [&] {
    return std::chrono::duration<double>(deadline - Clock::now()).count();
  };
  job.env.hang_timeout_seconds = std::max(5.0, std::min(60.0, seconds_left()));

  // Pass 1: correctness and integrity on every workload before any timing.
  events.stage("verify");
  std::vector<tasks::WorkloadLayout> layouts;
  for (const auto& w : workloads) {
    auto layout = tasks::layout_workload(*task, w);
    if (!layout) return finish("error", layout.error().message);
    layouts.push_back(std::move(*layout));
  }
  result.workloads.resize(layouts.size());
  for (size_t i = 0; i < layouts.size(); ++i) result.workloads[i].name = layouts[i].workload;
  bool stop = false;
  for (size_t i = 0; i < layouts.size() && !stop; ++i) {
    result.workloads[i].name = layouts[i].workload;
    WorkloadSession session(job, layouts[i], static_cast<int>(i), static_cast<int>(layouts.size()),
                            &result.workloads[i]);
    const bool ok = session.verify_pass();
    if (job.fatal) break;
    if (!ok && integrity_gate(result.gates.first_failed())) stop = true;
    if (seconds_left() <= 0) {
      result.notes.push_back("the job's time ran out during verification");
      break;
    }
  }

  // Pass 2: timing, interleaved with the baseline.
  bool all_verified = !job.fatal && !result.gates.any_failed();
  for (const auto& w : result.workloads) all_verified = all_verified && w.ran && w.passed;
  if (spec.kind == JobKind::kBenchmark && all_verified) {
    events.stage("timing");
    for (size_t i = 0; i < layouts.size(); ++i) {
      const double left = seconds_left();
      const double per_workload = left / static_cast<double>(layouts.size() - i);
      if (per_workload < 1.0) {
        result.notes.push_back("not timed (the job's time ran out): " + layouts[i].workload);
        result.workloads[i].passed = false;
        result.workloads[i].failure = "not timed: the job's time ran out; raise limits.job_seconds";
        continue;
      }
      StoppingLimits limits;
      limits.min_samples = spec.limits.min_samples;
      limits.max_samples = spec.limits.max_samples;
      limits.target_rel_noise = spec.limits.target_rel_noise;
      limits.time_budget_seconds =
          std::min(spec.limits.sample_time_cap_seconds, 0.6 * per_workload);
      WorkloadSession session(job, layouts[i], static_cast<int>(i),
                              static_cast<int>(layouts.size()), &result.workloads[i]);
      const bool ok = session.timing_pass(limits);
      if (job.fatal || (!ok && integrity_gate(result.gates.first_failed()))) break;
    }
  }

  // In a benchmark, a row passes only once it was timed against the baseline.
  if (spec.kind == JobKind::kBenchmark) {
    for (auto& w : result.workloads) {
      if (w.passed && !w.time_us) {
        w.passed = false;
        if (w.failure.empty())
          w.failure = "not timed: another workload failed first, so timing was skipped";
      }
    }
  }
  if (job.env.recorder != nullptr && recorder.dropped() > 0) {
    result.notes.push_back("CUPTI dropped " + std::to_string(recorder.dropped()) +
                           " activity records");
  }
  *fatal = job.fatal;
  if (job.fatal && !job.fatal_error.empty()) return finish("error", job.fatal_error);
  bool all_passed = !result.gates.any_failed();
  for (const auto& w : result.workloads) all_passed = all_passed && w.ran && w.passed;
  if (all_passed) return finish("passed", "");
  const std::string gate = result.gates.first_failed();
  std::string error;
  if (!gate.empty()) {
    error = "gate " + gate + " failed: " + result.gates.detail(gate) +
            ". Next: " + next_step(gate) + ".";
  } else {
    for (const auto& w : result.workloads) {
      if (!w.passed && !w.failure.empty()) {
        error = w.name + ": " + w.failure;
        break;
      }
    }
    if (error.empty()) error = "not every workload ran; see notes";
  }
  return finish("failed", error);
}

}  // namespace kiln::worker
