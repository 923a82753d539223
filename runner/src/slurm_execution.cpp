#include "kiln/runner/slurm_execution.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <fstream>

#include "kiln/base/elapsed.h"
#include "kiln/base/file.h"
#include "kiln/base/process.h"
#include "kiln/runner/worker_output.h"

namespace kiln::runner {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", std::round(seconds * 10) / 10);
  return text;
}

// The end of a file, for log_tail; "" when it is missing.
std::string file_tail(const fs::path& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  auto size = static_cast<size_t>(in.tellg());
  size_t start = size > bytes ? size - bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

// Follows worker.out as the node writes it: complete lines go to the WorkerOutput.
class OutputFollower {
 public:
  OutputFollower(fs::path path, WorkerOutput& output) : path_(std::move(path)), output_(output) {}

  // False once the output was rejected.
  bool poll(bool at_end) {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return ok_;
    in.seekg(0, std::ios::end);
    const auto size = static_cast<size_t>(in.tellg());
    if (size < offset_) return ok_;
    in.seekg(static_cast<std::streamoff>(offset_));
    std::string chunk(size - offset_, '\0');
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    chunk.resize(static_cast<size_t>(in.gcount()));
    offset_ += chunk.size();
    pending_ += chunk;
    size_t newline;
    while (ok_ && (newline = pending_.find('\n')) != std::string::npos) {
      ok_ = output_.add_line(std::string_view(pending_).substr(0, newline));
      pending_.erase(0, newline + 1);
    }
    if (ok_ && pending_.size() > (8u << 20)) ok_ = output_.add_line(pending_);
    if (ok_ && at_end && !pending_.empty()) {
      ok_ = output_.add_line(pending_);
      pending_.clear();
    }
    return ok_;
  }

 private:
  fs::path path_;
  WorkerOutput& output_;
  size_t offset_ = 0;
  std::string pending_;
  bool ok_ = true;
};

}  // namespace

SlurmExecutor::SlurmExecutor(SlurmBackend& backend, SlurmExecutorOptions options)
    : backend_(backend), options_(std::move(options)), poller_(backend_, options_.poll) {}

void SlurmExecutor::record_run(double seconds) {
  std::lock_guard lock(mutex_);
  run_seconds_total_ += seconds;
  ++runs_;
}

JobOutcome SlurmExecutor::execute(const JobLaunch& launch, const std::atomic<bool>& cancel,
                                  const std::function<void(json event)>& on_event) {
  JobOutcome outcome;
  WorkerOutput output(on_event);
  OutputFollower follower(launch.job_dir / kSlurmWorkerOut, output);
  auto stage = [&] { return output.last_stage(); };
  auto log_tail = [&] { return clip(file_tail(launch.job_dir / kSlurmWorkerLog, 2000), 2000); };
  auto fail = [&](Failure failure, const std::string& error, bool with_log) {
    outcome.last_stage = stage();
    outcome.result =
        make_error_result(launch.expect, stage(), failure, error, with_log ? log_tail() : "");
    spdlog::info("job {} ended: {}", launch.id, error);
    return outcome;
  };
  auto note = [&](const std::string& message) {
    on_event(json{{"event", "log"}, {"level", "info"}, {"message", message}});
  };

  const fs::path script = launch.job_dir / kSlurmScriptName;
  if (auto written = write_file(script, slurm_job_script(options_.job, launch.id, launch.worker,
                                                         launch.job_dir, launch.job_seconds));
      !written)
    return fail(Failure::kScheduler, written.error().message, false);
  auto submitted = backend_.submit(fs::absolute(script).string());
  if (!submitted) return fail(Failure::kScheduler, submitted.error().message, false);
  const std::string slurm_id = *submitted;
  spdlog::info("job {} is Slurm job {}", launch.id, slurm_id);
  note("Slurm job " + slurm_id + " submitted");

  const auto queued_at = Clock::now();
  std::optional<Clock::time_point> running_at;
  auto last_answer = Clock::now();
  std::string last_reason;
  auto give_up = [&](Failure failure, const std::string& error) {
    if (auto cancelled = backend_.cancel(slurm_id); !cancelled)
      spdlog::warn("job {}: {}", launch.id, cancelled.error().message);
    return fail(failure, error, failure == Failure::kTimeout);
  };

  poller_.watch(slurm_id);
  struct Forget {
    SlurmJobPoller& poller;
    const std::string& id;
    ~Forget() { poller.forget(id); }
  } forget{poller_, slurm_id};
  SlurmJobStatus ended;
  while (true) {
    auto polled = poller_.next(slurm_id, cancel);  // waits for the next poll
    if (cancel || !polled) {
      outcome.cancelled = true;
      return give_up(Failure::kCancelled, "cancelled in stage '" + stage() + "'; Slurm job " +
                                              slurm_id + " was scancelled");
    }
    const Result<SlurmJobStatus>& status = *polled;
    if (!status) {
      if (seconds_since(last_answer) > options_.controller_grace_seconds)
        return give_up(Failure::kScheduler,
                       "Slurm stopped answering for " + seconds_text(seconds_since(last_answer)) +
                           " s while job " + slurm_id + " was in stage '" + stage() +
                           "': " + status.error().message +
                           "; the job's fate is unknown, so nothing is reported: send it again "
                           "once slurmctld is back (`scontrol ping`)");
      continue;
    }
    last_answer = Clock::now();
    if (status->state == SlurmState::kPending) {
      last_reason = status->reason;
      if (seconds_since(queued_at) > options_.queue_seconds)
        return give_up(Failure::kScheduler,
                       "queue wait: Slurm did not start job " + slurm_id + " within " +
                           seconds_text(options_.queue_seconds) + " s (pending: " +
                           (last_reason.empty() ? "no reason given" : last_reason) +
                           "), so the runner cancelled it; retry later, use a less busy "
                           "partition, or start the runner with a longer --queue-seconds");
      continue;
    }
    if (status->state == SlurmState::kRunning) {
      if (!running_at) {
        running_at = Clock::now();
        note("Slurm job " + slurm_id + " running after " + seconds_text(seconds_since(queued_at)) +
             " s in the queue");
      }
      if (!follower.poll(false))
        return give_up(Failure::kBadOutput,
                       "bad output in stage '" + stage() + "': " + output.problem() +
                           "; Slurm job " + slurm_id +
                           " was cancelled and nothing it reported is trusted");
      if (seconds_since(*running_at) > launch.job_seconds + options_.run_grace_seconds)
        return give_up(Failure::kTimeout,
                       "timeout: the job passed its " + seconds_text(launch.job_seconds) +
                           " s limit in stage '" + stage() + "' and Slurm job " + slurm_id +
                           " was cancelled; look for a hang (run synccheck) or benchmark "
                           "fewer workloads");
      continue;
    }
    ended = *status;
    break;
  }

  if (running_at) record_run(seconds_since(*running_at));
  const bool output_ok = follower.poll(true);
  const std::string in = " in stage '" + stage() + "' (Slurm job " + slurm_id + ")";
  switch (ended.state) {
    case SlurmState::kCancelled:
      outcome.cancelled = true;
      return fail(Failure::kCancelled,
                  "cancelled by Slurm" + in +
                      ": someone ran scancel, or an administrator or a reservation ended it; "
                      "send it again",
                  false);
    case SlurmState::kPreempted:
      return fail(Failure::kScheduler,
                  "preempted" + in +
                      ": a higher-priority job took the node; send it again, or use a "
                      "partition without preemption",
                  false);
    case SlurmState::kNodeFail:
      return fail(
          Failure::kScheduler,
          "node failure" + in + ": the node running it failed (Slurm drains it); send it again",
          false);
    case SlurmState::kTimeout:
      return fail(
          Failure::kTimeout,
          "timeout: Slurm's time limit (" +
              slurm_time_text(options_.job.time_limit_seconds > 0 ? options_.job.time_limit_seconds
                                                                  : launch.job_seconds + 60) +
              " min) killed it" + in +
              "; look for a hang (run synccheck), benchmark fewer workloads, or start "
              "the runner with a longer --time-limit",
          true);
    case SlurmState::kOutOfMemory:
      return fail(Failure::kScheduler,
                  "out of memory" + in +
                      ": Slurm's memory limit killed the worker; ask the cluster for more "
                      "memory per job or use smaller workloads",
                  true);
    case SlurmState::kCompleted:
    case SlurmState::kFailed:
      break;
    default:
      return fail(Failure::kScheduler,
                  "Slurm ended the job as " + (ended.name.empty() ? "unknown" : ended.name) + in +
                      "; see `sacct -j " + slurm_id + "` and send it again",
                  true);
  }

  // The worker ran: the same judgement as a local job (job_execution.cpp).
  if (!output_ok)
    return fail(Failure::kBadOutput,
                "bad output" + in + ": " + output.problem() + "; nothing it reported is trusted",
                true);
  auto exit_text = read_file(launch.job_dir / kSlurmWorkerExit);
  if (!exit_text)
    return fail(Failure::kScheduler,
                "the batch script ended (" + ended.name + ")" + in +
                    " without recording the worker's exit: is the job folder " +
                    launch.job_dir.string() +
                    " on a filesystem the nodes share? See slurm.out there",
                false);
  int code = std::atoi(exit_text->c_str());
  if (code > 128 && code < 160)
    return fail(Failure::kCrashed,
                "crashed (signal " + std::to_string(code - 128) + ", " + signal_name(code - 128) +
                    ")" + in +
                    ": the worker died, most often from a candidate that writes out of bounds "
                    "or corrupts memory; run racecheck and simulate on it",
                true);
  if (code != 0)
    return fail(
        Failure::kExitCode,
        "exit code " + std::to_string(code) + in + ": the worker itself failed; see log_tail",
        true);
  if (!output.result())
    return fail(Failure::kNoResult,
                "no result: the worker exited" + in + " without writing a result line", true);
  if (auto problem = check_result(*output.result(), launch.expect))
    return fail(Failure::kInvalidResult,
                "invalid result" + in + ": " + *problem +
                    "; the runner does not pass on numbers it cannot trust",
                false);
  outcome.last_stage = stage();
  outcome.result = *output.result();
  spdlog::info("job {} (Slurm job {}) ended: {}", launch.id, slurm_id,
               outcome.result.value("status", "?"));
  return outcome;
}

json SlurmExecutor::health() {
  json out{
      {"partition", options_.job.partition.empty() ? json(nullptr) : json(options_.job.partition)},
      {"gres", options_.job.gres}};
  auto cluster = backend_.cluster();
  if (!cluster) {
    out["error"] = cluster.error().message;
    return out;
  }
  double mean_run = 0;
  int runs = 0;
  {
    std::lock_guard lock(mutex_);
    runs = runs_;
    if (runs) mean_run = run_seconds_total_ / runs;
  }
  out["nodes"] = cluster->nodes;
  out["idle_nodes"] = cluster->idle_nodes;
  out["gpus"] = cluster->gpus;
  out["jobs_pending"] = cluster->jobs_pending;
  out["jobs_running"] = cluster->jobs_running;
  out["mean_run_s"] = runs ? json(std::round(mean_run * 100) / 100) : json(nullptr);
  // A rough wait: the pending jobs ahead, served by the partition's slots (its GPUs, or its
  // nodes when it has none), each taking what this runner's jobs took on average.
  const int slots = cluster->gpus > 0 ? cluster->gpus : std::max(cluster->nodes, 1);
  if (cluster->idle_nodes > 0 && cluster->jobs_pending == 0)
    out["expected_wait_s"] = 0;
  else if (runs)
    out["expected_wait_s"] =
        std::round(std::ceil(static_cast<double>(cluster->jobs_pending + 1) / slots) * mean_run);
  else
    out["expected_wait_s"] = nullptr;  // unknown until this runner saw a job run
  return out;
}

}  // namespace kiln::runner
