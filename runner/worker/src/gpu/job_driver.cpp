#include "kiln/worker/job_driver.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "activity_recorder.h"
#include "candidate_host.h"
#include "device_info.h"
#include "device_state.h"
#include "harness_resources.h"
#include "job_builds.h"
#include "kiln/base/sha256.h"
#include "kiln/base/text.h"
#include "kiln/compiler/kernel_build.h"
#include "kiln/tasks/hash_mix.h"
#include "kiln/tasks/task.h"
#include "kiln/worker/dynamic_library.h"
#include "kiln/worker/environment_guard.h"
#include "kiln/worker/event_stream.h"
#include "kiln/worker/loaded_libraries.h"
#include "kiln/worker/nvml_probe.h"
#include "kiln/worker/peak_table.h"
#include "kiln/worker/timing_consistency.h"
#include "kiln/worker/wall_time.h"
#include "kiln/worker/worker_result.h"
#include "runtime_target.h"
#include "tool_jobs.h"
#include "workload_session.h"

namespace kiln::worker {

namespace {

using Clock = std::chrono::steady_clock;
using Deadline = decltype(Clock::now() + std::chrono::duration<double>(0));

// A failed integrity gate stops the job; a wrong answer (correctness, determinism) only
// fails its workload, so the other workloads still say how far off the kernel is.
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
  if (gate == gate::kHiddenStreamWork)
    return "use only the given stream, from the calling thread, and return without waiting for "
           "the GPU";
  if (gate == gate::kHarnessState)
    return "set no environment variables, device limits, cache preferences or stream attributes";
  if (gate == gate::kCudaErrors)
    return "check every CUDA call and launch (compute-sanitizer memcheck helps)";
  if (gate == gate::kCandidateProcess)
    return "let kiln_launch return normally: no exit, no crash, no writes to descriptors it "
           "did not open";
  if (gate == gate::kActivityRecord) return "leave the profiler (CUPTI) alone";
  if (gate == gate::kDeviceMemory)
    return "free what a call allocates, or allocate one workspace and reuse it";
  return "see the gate's detail";
}

bool every_workload_passed(const std::vector<WorkloadResult>& workloads) {
  return std::all_of(workloads.begin(), workloads.end(),
                     [](const WorkloadResult& w) { return w.ran && w.passed; });
}

// The error of a failed job: the first failed gate and what to do about it, else the first
// workload that failed.
std::string failure_summary(const WorkerResult& result) {
  const std::string gate = result.gates.first_failed();
  if (!gate.empty()) {
    return "gate " + gate + " failed: " + result.gates.detail(gate) + ". Next: " + next_step(gate) +
           ".";
  }
  for (const auto& w : result.workloads) {
    if (!w.passed && !w.failure.empty()) return w.name + ": " + w.failure;
  }
  return "not every workload ran; see notes";
}

// One job and everything it holds until its result is written. Each step that can end the
// job returns false after end() recorded the result's status and error; drive_job, below,
// is the recipe that calls them. The members are destroyed in the reverse of their order
// here: the harness's device memory is freed before NVML and CUPTI shut down.
class JobDriver {
 public:
  JobDriver(const JobSpec& spec, const WorkerOptions& options, std::ostream& out)
      : spec_(spec),
        options_(options),
        started_(Clock::now()),
        deadline_(started_ +
                  std::chrono::duration<double>(spec.limits.job_seconds - reserve_seconds(spec))),
        events_(out),
        builder_(toolchain_for_runtime(options.toolchain)) {
    result_.kind = job_kind_name(spec.kind);
  }

  void stage(const std::string& name) { events_.stage(name); }
  void note(const std::string& text) { result_.notes.push_back(text); }
  // Without a complete activity record, hidden work cannot be seen and times come from CUDA
  // events: both gates are not run, so the result is unscored and says why.
  void activity_not_recorded(const std::string& why) {
    note(why + ": times come from CUDA events; the result cannot be scored");
    result_.gates.not_run(gate::kActivityRecord, why);
    result_.gates.not_run(gate::kHiddenStreamWork, why + ", so work outside the stream is unseen");
    result_.gates.not_run(gate::kDeviceMemory, why + ", so the candidate's allocations are unseen");
  }
  bool fatal() const { return job_.fatal; }
  WallTime& wall() { return wall_; }

  // The task bundle, the candidate's hash and the workloads the job names (all by default).
  bool load_task();
  // The candidate (with the banned_symbols gate), then the task's baseline and references.
  bool build();
  // Profile and sanitize jobs: the tool over the run-once mode (tool_jobs.h), then the result.
  int run_tool_job();
  // The task's baseline, CPU reference and GPU reference, and their entry points.
  bool load();
  // CUPTI, the GPU, NVML and the GPU's peak rates.
  bool open_gpu();
  // The harness's resources and the context every workload session shares.
  bool set_up_harness();
  // The candidate, last, in its own confined process (candidate_host.h): what its load-time
  // code did to that process's environment or device settings fails the harness_state gate.
  bool load_candidate();
  // The incumbent (JobSpec::incumbent) in a second host, as the candidate's; any failure of
  // it is the job's error, never the candidate's.
  bool load_incumbent();
  // Every workload's tensor layout, and a result row for each.
  bool lay_out_workloads();
  // Pass 1: correctness and integrity on every workload before any timing.
  void verify_pass();
  bool all_verified() const {
    return !job_.fatal && !result_.gates.any_failed() && every_workload_passed(result_.workloads);
  }
  // Pass 2: timing, interleaved with the baseline, the time left shared among the workloads.
  void timing_pass();
  // Passed when every gate and every workload passed; the result.
  int finish_with_verdict();

  // Records how the job ends; false, so a step can `return end(...)`.
  bool end(const std::string& status, const std::string& error);
  // Writes the stage "done" and the result with the status end() recorded; the exit code.
  int finish();
  int finish(const std::string& status, const std::string& error) {
    end(status, error);
    return finish();
  }

 private:
  // Time kept back from the job's limit for writing the result and leaving.
  static double reserve_seconds(const JobSpec& spec) {
    return std::max(10.0, 0.05 * spec.limits.job_seconds);
  }
  double seconds_left() const {
    return std::chrono::duration<double>(deadline_ - Clock::now()).count();
  }
  StoppingLimits stopping_limits(double seconds_per_workload) const;
  // Starts a host that loads `library` (the candidate's or the incumbent's build).
  Result<std::unique_ptr<CandidateHost>> start_host(const std::filesystem::path& library,
                                                    host::LoadReply* reply) const;
  // A benchmark row passes only once it was timed against the baseline.
  void fail_untimed_rows();

  const JobSpec& spec_;
  const WorkerOptions& options_;
  const Clock::time_point started_;
  const Deadline deadline_;
  EventStream events_;
  WorkerResult result_;
  std::optional<tasks::Task> task_;
  std::vector<tasks::Workload> workloads_;
  const compiler::KernelBuild builder_;
  compiler::BuildOutcome candidate_build_;
  compiler::BuildOutcome incumbent_build_;  // ok only when the job names an incumbent
  compiler::BuildOutcome baseline_build_;
  compiler::BuildOutcome reference_build_;
  compiler::BuildOutcome gpu_reference_build_;  // ok only when the task has a GPU reference
  std::optional<DynamicLibrary> baseline_library_;
  std::optional<DynamicLibrary> reference_library_;
  std::optional<DynamicLibrary> gpu_reference_library_;
  ActivityRecorder recorder_;
  NvmlProbe nvml_;
  HarnessResources harness_;
  DeviceState device_state_;
  WallTime wall_;
  std::unique_ptr<CandidateHost> candidate_host_;  // stops the host before the harness goes
  std::unique_ptr<CandidateHost> incumbent_host_;
  JobContext job_;
  std::vector<tasks::WorkloadLayout> layouts_;
};

bool JobDriver::load_task() {
  auto task = tasks::load_task(spec_.task_dir);
  if (!task) return end("error", "cannot load the task bundle: " + task.error().message);
  task_ = std::move(*task);
  adapt_task_to_runtime(&*task_, &result_.notes);
  result_.task_name = task_->name;
  result_.task_sha256 = task_->sha256;
  result_.task_workload_count = static_cast<int>(task_->workloads.size());
  auto candidate_hash = sha256_file(spec_.candidate);
  if (!candidate_hash)
    return end("error", "cannot read the candidate: " + candidate_hash.error().message);
  result_.candidate_sha256 = *candidate_hash;
  // After the task and candidate are named, so the refusal is a result the runner's check
  // accepts and passes on in the worker's own words.
  if (const Status runs = runtime_runs(spec_.kind); !runs)
    return end("error", runs.error().message);
  if (!spec_.incumbent.empty()) {
    auto incumbent_hash = sha256_file(spec_.incumbent);
    if (!incumbent_hash)
      return end("error", "cannot read the incumbent: " + incumbent_hash.error().message);
    if (*incumbent_hash != spec_.incumbent_sha256)
      return end("error", "the incumbent's file hashes to " + *incumbent_hash + ", not " +
                              spec_.incumbent_sha256 + " as job.json says");
    result_.incumbent_sha256 = *incumbent_hash;
  }

  if (spec_.workloads.empty()) {
    workloads_ = task_->workloads;
  } else {
    for (const auto& name : spec_.workloads) {
      auto w = tasks::find_workload(*task_, name);
      if (!w) return end("error", w.error().message);
      workloads_.push_back(*w);
    }
  }
  result_.job_workload_count = static_cast<int>(workloads_.size());
  return true;
}

bool JobDriver::build() {
  events_.log("info", "building the candidate for " + task_->arch);
  candidate_build_ = builder_.build(candidate_build_request(spec_, *task_));
  result_.build = candidate_build_;
  if (!candidate_build_.ok) {
    if (!candidate_build_.banned.empty()) {
      result_.gates.fail(gate::kBannedSymbols, "",
                         compiler::BannedSymbols::describe(candidate_build_.banned));
    }
    return end("failed", candidate_build_.error);
  }
  result_.gates.pass(gate::kBannedSymbols);
  if (!spec_.incumbent.empty()) {
    events_.log("info", "building the incumbent (cached by its source)");
    incumbent_build_ = builder_.build(incumbent_build_request(builder_, spec_, *task_));
    if (!incumbent_build_.ok)
      return end("error", "the incumbent does not build (" + incumbent_build_.error +
                              "); nothing is said about the candidate");
  }

  const compiler::BuildRequest baseline = baseline_build_request(builder_, spec_, *task_);
  events_.log("info", "building the baseline (cached per task)");
  baseline_build_ = builder_.build(baseline);
  if (!baseline_build_.ok)
    return end("error", "the task's baseline does not build: " + baseline_build_.error);
  reference_build_ = builder_.build(reference_build_request(builder_, spec_, *task_));
  if (!reference_build_.ok)
    return end("error", "the task's CPU reference does not build: " + reference_build_.error);
  if (!task_->gpu_reference_path.empty()) {
    events_.log("info", "building the task's GPU reference (cached per task)");
    gpu_reference_build_ = builder_.build(gpu_reference_build_request(builder_, spec_, *task_));
    if (!gpu_reference_build_.ok)
      return end("error", "the task's GPU reference does not build: " + gpu_reference_build_.error);
  }
  return true;
}

int JobDriver::run_tool_job() {
  const ToolJobInput input{spec_, options_, *task_, workloads_, started_};
  if (spec_.kind == JobKind::kProfile) {
    stage("profile");
    run_profile(input, events_, &result_);
  } else {
    stage("sanitize");
    run_sanitize(input, events_, &result_);
  }
  return finish();  // with the status and error the tool job set
}

// A baseline or reference that does not load is the task's failure, an error.
bool JobDriver::load() {
  auto baseline = DynamicLibrary::open(baseline_build_.library);
  if (!baseline)
    return end("error", "the task's baseline does not load: " + baseline.error().message);
  baseline_library_ = std::move(*baseline);
  auto baseline_fn = baseline_library_->symbol("kiln_launch");
  if (!baseline_fn) return end("error", baseline_fn.error().message);

  auto reference = DynamicLibrary::open(reference_build_.library);
  if (!reference)
    return end("error", "the task's reference does not load: " + reference.error().message);
  reference_library_ = std::move(*reference);
  auto reference_fn = reference_library_->symbol("kiln_reference");
  if (!reference_fn) return end("error", reference_fn.error().message);

  job_.baseline = reinterpret_cast<kiln_launch_fn>(*baseline_fn);
  job_.reference = reinterpret_cast<kiln_reference_fn>(*reference_fn);

  if (!gpu_reference_build_.ok) return true;  // the task has none
  auto gpu_reference = DynamicLibrary::open(gpu_reference_build_.library);
  if (!gpu_reference)
    return end("error", "the task's GPU reference does not load: " + gpu_reference.error().message);
  gpu_reference_library_ = std::move(*gpu_reference);
  auto gpu_reference_fn = gpu_reference_library_->symbol("kiln_launch");
  if (!gpu_reference_fn) return end("error", gpu_reference_fn.error().message);
  job_.gpu_reference = reinterpret_cast<kiln_launch_fn>(*gpu_reference_fn);
  return true;
}

// The candidate host: a separate process that loads the candidate, confined first, so no
// candidate code runs here (candidate_host.h). A candidate that does not load is the
// candidate's failure; a host that does not start is the harness's.
Result<std::unique_ptr<CandidateHost>> JobDriver::start_host(const std::filesystem::path& library,
                                                             host::LoadReply* reply) const {
  CandidateHost::Options options;
  options.executable = options_.executable;
  host::LoadRequest& load = options.load;
  load.task_dir = spec_.task_dir;
  load.library = library;
  load.cuda_root = options_.toolchain.cuda_root;
  load.gpu = options_.gpu;
  load.hang_timeout_seconds = job_.env.hang_timeout_seconds;
  load.readable = {std::filesystem::absolute(spec_.task_dir),
                   std::filesystem::absolute(library).parent_path()};
  // Only timed jobs compare the host's reports with the verifier's clock (judge_round_trip).
  options.probes = spec_.kind == JobKind::kBenchmark ? kRoundTripProbes : 0;
  return CandidateHost::start(options, reply);
}

bool JobDriver::load_candidate() {
  host::LoadReply reply;
  auto started = start_host(candidate_build_.library, &reply);
  if (!started) return end("error", "the candidate's process: " + started.error().message);
  candidate_host_ = std::move(*started);
  result_.isolation = reply.confinement;
  if (!reply.harness_error.empty())
    return end("error", "the candidate's process could not start: " + reply.harness_error);
  if (!reply.ok) return end("failed", reply.error);
  if (const auto banned = banned_among(reply.libraries, task_->banned_symbols); !banned.empty()) {
    result_.gates.fail(gate::kBannedSymbols, "",
                       "when the candidate's library loaded, " + join(banned, "; "));
    return end("failed", failure_summary(result_));
  }
  if (!reply.activity)
    activity_not_recorded("CUPTI unavailable in the candidate's process (" + reply.activity_note +
                          ")");
  if (!reply.load_changes.empty()) {
    result_.gates.fail(gate::kHarnessState, "",
                       "the candidate's library changed " + join(reply.load_changes, "; ") +
                           " when it loaded (put back by the harness)");
    return end("failed", failure_summary(result_));
  }
  job_.candidate = candidate_host_.get();
  return true;
}

bool JobDriver::load_incumbent() {
  if (spec_.incumbent.empty()) return true;
  host::LoadReply reply;
  auto started = start_host(incumbent_build_.library, &reply);
  if (!started) return end("error", "the incumbent's process: " + started.error().message);
  incumbent_host_ = std::move(*started);
  std::string problem;
  if (!reply.harness_error.empty())
    problem = "its process could not start: " + reply.harness_error;
  else if (!reply.ok)
    problem = reply.error;
  else if (const auto banned = banned_among(reply.libraries, task_->banned_symbols);
           !banned.empty())
    problem = "when its library loaded, " + join(banned, "; ");
  else if (!reply.load_changes.empty())
    problem = "its library changed " + join(reply.load_changes, "; ") + " when it loaded";
  if (!problem.empty())
    return end("error",
               "the incumbent (the frontier's best) cannot be timed beside the "
               "candidate: " +
                   problem + "; nothing is said about the candidate");
  if (!reply.activity)
    activity_not_recorded("CUPTI unavailable in the incumbent's process (" + reply.activity_note +
                          ")");
  job_.incumbent = incumbent_host_.get();
  return true;
}

bool JobDriver::open_gpu() {
  // Before the first CUDA call, so CUPTI sees every kernel of the context (activity_recorder.h).
  if (const Status cupti = recorder_.start(); !cupti)
    activity_not_recorded("CUPTI unavailable (" + cupti.error().message + ")");
  auto gpu = open_device(options_.gpu);
  if (!gpu) return end("error", gpu.error().message);
  if (nvml_.open(gpu->pci_bus_id, static_cast<unsigned>(options_.gpu))) {
    gpu->nvml = true;
    const std::string driver = nvml_.driver_version();
    if (!driver.empty()) gpu->driver = driver;
  }
  gpu->nvml_note = nvml_.note();
  gpu->peak = PeakTable::lookup(gpu->name, options_.hw_dir);
  result_.gpu = *gpu;
  return true;
}

bool JobDriver::set_up_harness() {
  if (auto s = harness_.init(result_.gpu->l2_bytes); !s) return end("error", s.error().message);
  job_.task = &*task_;
  job_.env = harness_.environment();
  job_.env.guard_seed = tasks::mix64(spec_.seed ^ 0x6775617264ull);
  if (recorder_.running()) {
    if (auto s = harness_.learn_activity_ids(recorder_, &job_.env.activity); s) {
      job_.env.recorder = &recorder_;
    } else {
      activity_not_recorded("CUPTI did not see the harness's marker kernels (" + s.error().message +
                            ")");
    }
  }
  job_.tolerance = task_->tolerance;
  job_.baseline_tolerance = {2 * task_->tolerance.atol, 2 * task_->tolerance.rtol, 0};
  job_.seed = spec_.seed;
  job_.gates = &result_.gates;
  job_.events = &events_;
  job_.nvml = &nvml_;
  job_.gpu = &*result_.gpu;
  job_.wall = &wall_;
  job_.env.hang_timeout_seconds = std::max(5.0, std::min(60.0, seconds_left()));
  auto state = DeviceState::capture(job_.env.launch_stream);
  if (!state) return end("error", state.error().message);
  device_state_ = *state;
  job_.env.device_state = &device_state_;
  return true;
}

bool JobDriver::lay_out_workloads() {
  for (const auto& w : workloads_) {
    auto layout = tasks::layout_workload(*task_, w);
    if (!layout) return end("error", layout.error().message);
    layouts_.push_back(std::move(*layout));
  }
  result_.workloads.resize(layouts_.size());
  for (size_t i = 0; i < layouts_.size(); ++i) result_.workloads[i].name = layouts_[i].workload;
  return true;
}

void JobDriver::verify_pass() {
  const int total = static_cast<int>(layouts_.size());
  bool stop = false;
  for (size_t i = 0; i < layouts_.size() && !stop; ++i) {
    WorkloadSession session(job_, layouts_[i], static_cast<int>(i), total, &result_.workloads[i]);
    const bool ok = session.verify_pass();
    if (job_.fatal) break;
    if (!ok && integrity_gate(result_.gates.first_failed())) stop = true;
    if (seconds_left() <= 0) {
      note("the job's time ran out during verification");
      break;
    }
  }
}

StoppingLimits JobDriver::stopping_limits(double seconds_per_workload) const {
  StoppingLimits limits;
  limits.min_samples = spec_.limits.min_samples;
  limits.max_samples = spec_.limits.max_samples;
  limits.target_rel_noise = spec_.limits.target_rel_noise;
  limits.time_budget_seconds =
      std::min(spec_.limits.sample_time_cap_seconds, 0.6 * seconds_per_workload);
  return limits;
}

void JobDriver::timing_pass() {
  const int total = static_cast<int>(layouts_.size());
  for (size_t i = 0; i < layouts_.size(); ++i) {
    const double per_workload = seconds_left() / static_cast<double>(layouts_.size() - i);
    if (per_workload < 1.0) {
      note("not timed (the job's time ran out): " + layouts_[i].workload);
      result_.workloads[i].passed = false;
      result_.workloads[i].failure = "not timed: the job's time ran out; raise limits.job_seconds";
      continue;
    }
    WorkloadSession session(job_, layouts_[i], static_cast<int>(i), total, &result_.workloads[i]);
    const bool ok = session.timing_pass(stopping_limits(per_workload));
    if (job_.fatal || (!ok && integrity_gate(result_.gates.first_failed()))) break;
  }
}

void JobDriver::fail_untimed_rows() {
  for (auto& w : result_.workloads) {
    if (w.passed && !w.time_us) {
      w.passed = false;
      if (w.failure.empty())
        w.failure = "not timed: another workload failed first, so timing was skipped";
    }
  }
}

int JobDriver::finish_with_verdict() {
  if (spec_.kind == JobKind::kBenchmark) fail_untimed_rows();
  const uint64_t dropped = recorder_.dropped() +
                           (candidate_host_ != nullptr ? candidate_host_->dropped() : 0) +
                           (incumbent_host_ != nullptr ? incumbent_host_->dropped() : 0);
  if (job_.env.recorder != nullptr && dropped > 0) {
    activity_not_recorded("CUPTI dropped " + std::to_string(dropped) +
                          " activity records, so not every kernel of a timed window was seen");
  } else if (job_.env.recorder != nullptr) {
    result_.gates.pass(gate::kActivityRecord);
  }
  if (candidate_host_ != nullptr && !candidate_host_->broken() && !job_.fatal)
    result_.gates.pass(gate::kCandidateProcess);
  if (job_.fatal && !job_.fatal_error.empty()) return finish("error", job_.fatal_error);
  if (!result_.gates.any_failed() && every_workload_passed(result_.workloads))
    return finish("passed", "");
  return finish("failed", failure_summary(result_));
}

bool JobDriver::end(const std::string& status, const std::string& error) {
  result_.status = status;
  result_.error = error;
  return false;
}

int JobDriver::finish() {
  if (spec_.kind == JobKind::kVerify || spec_.kind == JobKind::kBenchmark) {
    wall_.total_s = std::chrono::duration<double>(Clock::now() - started_).count();
    result_.wall_time = wall_.to_json();
  }
  result_.stage = result_.status == "passed" ? "done" : events_.last_stage();
  events_.stage("done");
  events_.result(result_.to_json());
  return 0;
}

}  // namespace

int drive_job(const JobSpec& spec, const WorkerOptions& options, std::ostream& out, bool* fatal) {
  *fatal = false;
  JobDriver job(spec, options, out);
  // The task and candidate are named before anything else, so every answer (a refusal of a job
  // this runtime cannot run too) is this job's result; one that ends here is at stage "start".
  if (!job.load_task()) return job.finish();
  job.stage("build");
  {
    const ScopedSeconds timed(&job.wall().build_s);
    if (!job.build()) return job.finish();
  }
  if (options.build_only) {
    job.note("build only: nothing was run");
    return job.finish("passed", "");
  }
  if (spec.kind == JobKind::kProfile || spec.kind == JobKind::kSanitize) return job.run_tool_job();

  job.stage("load");
  {
    const ScopedSeconds timed(&job.wall().load_s);
    if (!job.load() || !job.open_gpu() || !job.set_up_harness() || !job.load_candidate() ||
        !job.load_incumbent())
      return job.finish();
  }

  job.stage("verify");
  if (!job.lay_out_workloads()) return job.finish();
  {
    const ScopedSeconds timed(&job.wall().verify_s);
    job.verify_pass();
  }
  if (spec.kind == JobKind::kBenchmark && job.all_verified()) {
    job.stage("timing");
    const ScopedSeconds timed(&job.wall().timing_s);
    job.timing_pass();
  }
  *fatal = job.fatal();
  return job.finish_with_verdict();
}

}  // namespace kiln::worker
