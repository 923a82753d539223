// `kiln runner`: the HTTP API of runner/protocol/PROTOCOL.md over a JobScheduler. Checks every
// request (bearer token, Host on a loopback bind, size), every job body (400 naming
// the field, 409 when a sha256 does not match the bytes, 429 when the queue is full),
// and caches task bundles and candidates by content hash.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/runner/slurm_command.h"
#include "kiln/runner/slurm_execution.h"

namespace kiln::runner {

struct RunnerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;                   // 0: the kernel picks one (bind() returns it)
  std::optional<std::string> token;  // required when host is not a loopback address
  std::vector<int> gpus;             // CUDA device ordinals
  std::filesystem::path cache_dir;   // the content-addressed cache and job folders
  std::filesystem::path worker;      // kiln-worker
  bool simulated_worker = false;     // `worker` is kiln-worker-sim (SchedulerOptions)
  size_t queue_limit = 16;
  double job_seconds = 600;  // the most a job may run; clients may ask for less
  size_t max_request_bytes = 16u << 20;
  size_t retained_jobs = 128;
  bool discover_gpu_names = true;  // ask nvidia-smi for names (when installed)
  std::filesystem::path lock_dir;  // machine-wide GPU leases (GpuLease); empty: none
  // Set: `kiln runner --slurm`. Each job becomes a Slurm job; `gpus` is ignored, and
  // `slurm_slots` jobs are in Slurm at once (the rest wait in the runner's own queue).
  std::optional<SlurmExecutorOptions> slurm;
  size_t slurm_slots = 8;
  SlurmCommandRunner* slurm_commands = nullptr;  // tests inject a fake; null: the real tools
};

class RunnerServer {
 public:
  explicit RunnerServer(RunnerOptions options);
  ~RunnerServer();  // stops: workers are killed, jobs in flight end cancelled
  RunnerServer(const RunnerServer&) = delete;
  RunnerServer& operator=(const RunnerServer&) = delete;

  // Checks the options (a token for a non-loopback bind, the worker, the cache folder)
  // and binds. Returns the port. Errors say what to change.
  Result<int> bind();
  void serve();  // blocks until stop()
  void stop();

  // bind() and serve() on a thread of its own; returns the base URL.
  Result<std::string> start();
  std::string url() const;  // after bind()

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::runner
