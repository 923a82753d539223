// kiln runner: the GPU benchmark server (runner/protocol/PROTOCOL.md).
#include <spdlog/spdlog.h>

#include <cstdio>

#include "commands.h"
#include "kiln/base/stop_signals.h"
#include "kiln/http/token_file.h"
#include "kiln/runner/gpu_discovery.h"
#include "kiln/runner/listen_address.h"
#include "kiln/runner/runner_paths.h"
#include "kiln/runner/runner_server.h"

namespace kiln::cli {
namespace {

struct RunnerCommandOptions {
  std::string gpus;  // empty: every GPU of this machine
  std::string listen = "127.0.0.1:8000";
  std::string token_file;
  std::string cache_dir;
  std::string worker;
  bool simulated_worker = false;
  std::string lock_dir;
  size_t queue_limit = 16;
  double job_seconds = 600;
  size_t max_request_bytes = 16u << 20;
  bool slurm = false;
  std::string partition;
  std::string gres = "gpu:1";
  std::string account;
  double time_limit = 0;
  double queue_seconds = 600;
  size_t slurm_slots = 8;
  double slurmctld_grace = 60;
};

std::string join(const std::vector<int>& items) {
  std::string out;
  for (int item : items) out += (out.empty() ? "" : ",") + std::to_string(item);
  return out;
}

Result<runner::RunnerOptions> resolve(const RunnerCommandOptions& given) {
  runner::RunnerOptions options;
  if (given.slurm) {
    runner::SlurmExecutorOptions slurm;
    slurm.job.partition = given.partition;
    slurm.job.gres = given.gres;
    slurm.job.account = given.account;
    slurm.job.time_limit_seconds = given.time_limit;
    slurm.queue_seconds = given.queue_seconds;
    slurm.controller_grace_seconds = given.slurmctld_grace;
    options.slurm = slurm;
    options.slurm_slots = given.slurm_slots;
  } else if (!given.partition.empty() || !given.account.empty() || given.time_limit > 0) {
    return make_error("--partition, --account and --time-limit need --slurm");
  } else if (given.gpus.empty()) {
    options.gpus = runner::local_gpu_indices();
    if (options.gpus.empty())
      return make_error(
          "no GPU found (/dev/nvidia0 is missing); pass --gpus on a machine with one");
  } else {
    auto gpus = runner::parse_gpu_list(given.gpus);
    if (!gpus) return gpus.error();
    options.gpus = *gpus;
  }
  auto address = runner::parse_host_port(given.listen);
  if (!address) return make_error("--listen: " + address.error().message);
  options.host = address->host;
  options.port = address->port;
  if (!given.token_file.empty()) {
    auto token = http::read_token_file(given.token_file);
    if (!token) return token.error();
    options.token = *token;
  }
  options.cache_dir = given.cache_dir.empty() ? runner::default_runner_cache_dir()
                                              : std::filesystem::path(given.cache_dir);
  options.worker =
      given.worker.empty() ? runner::default_worker_path() : std::filesystem::path(given.worker);
  options.simulated_worker = given.simulated_worker;
  options.lock_dir = given.lock_dir.empty() ? std::filesystem::temp_directory_path()
                                            : std::filesystem::path(given.lock_dir);
  options.queue_limit = given.queue_limit;
  options.job_seconds = given.job_seconds;
  options.max_request_bytes = given.max_request_bytes;
  return options;
}

int serve(const runner::RunnerOptions& options) {
  // Before any thread starts, so the waiter takes SIGINT/SIGTERM (the worker processes
  // get a clean signal mask of their own).
  StopSignals signals;
  runner::RunnerServer server(options);
  auto port = server.bind();
  if (!port) {
    spdlog::error("{}", port.error().message);
    return 1;
  }
  // Tests and scripts wait for this line.
  const std::string where = options.slurm
                                ? "Slurm partition " + (options.slurm->job.partition.empty()
                                                            ? std::string("(default)")
                                                            : options.slurm->job.partition)
                                : "GPUs " + join(options.gpus);
  std::fprintf(stderr, "kiln: runner listening on %s (%s; worker %s; cache %s)\n",
               server.url().c_str(), where.c_str(), options.worker.c_str(),
               options.cache_dir.c_str());
  std::fflush(stderr);
  signals.watch([&](int received) {
    spdlog::info("signal {} received; cancelling jobs and stopping", received);
    server.stop();
  });
  server.serve();
  signals.finish();
  return 0;
}

}  // namespace

Runner add_runner_command(CLI::App& app, const GlobalOptions&) {
  auto* command = app.add_subcommand(
      "runner", "Serve GPU benchmark jobs over HTTP (runner/protocol/PROTOCOL.md)");
  auto options = std::make_shared<RunnerCommandOptions>();
  command->add_option("--gpus", options->gpus,
                      "GPU indices to run jobs on, e.g. 0,1 (default: every GPU here)");
  command
      ->add_option("--listen", options->listen,
                   "HOST:PORT to serve on; other than loopback needs --token-file")
      ->capture_default_str();
  command->add_option("--token-file", options->token_file,
                      "require Authorization: Bearer <contents of FILE>");
  command->add_option(
      "--cache-dir", options->cache_dir,
      "task bundles, candidates, builds, job folders (default: ~/.cache/kiln/runner)");
  command->add_option("--worker", options->worker,
                      "the kiln-worker executable (default: next to kiln)");
  command->add_flag("--simulated-worker", options->simulated_worker,
                    "the worker is kiln-worker-sim (CPU simulator, verify jobs only): results "
                    "name the task's sim workloads and are never scored");
  command->add_option("--lock-dir", options->lock_dir,
                      "where the machine-wide GPU lock files live, shared with other kiln "
                      "processes (default: /tmp)");
  command
      ->add_option("--queue-limit", options->queue_limit,
                   "jobs that may wait for a GPU; more are refused (429)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{0}, std::size_t{100000}));
  command
      ->add_option("--job-seconds", options->job_seconds,
                   "the longest a job may run before its worker is killed")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 86400.0));
  command
      ->add_option("--max-request-bytes", options->max_request_bytes,
                   "largest job body accepted (413 beyond)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30));
  command->add_flag("--slurm", options->slurm,
                    "run each job as a Slurm job (sbatch) instead of on this machine's GPUs; "
                    "--cache-dir must be on a filesystem the nodes share");
  command->add_option("--partition", options->partition,
                      "Slurm partition for the jobs (default: the cluster's default)");
  command->add_option("--gres", options->gres, "Slurm --gres per job; none: no GRES (CPU jobs)")
      ->capture_default_str();
  command->add_option("--account", options->account, "Slurm account to charge");
  command
      ->add_option("--time-limit", options->time_limit,
                   "Slurm time limit per job in seconds (default: --job-seconds plus 60)")
      ->check(CLI::Range(1.0, 31.0 * 86400));
  command
      ->add_option("--queue-seconds", options->queue_seconds,
                   "with --slurm: longest a job may wait in Slurm's queue before it is "
                   "cancelled and answered as an error")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 7.0 * 86400));
  command
      ->add_option("--slurm-slots", options->slurm_slots,
                   "with --slurm: jobs submitted to Slurm at once (more wait in the runner's "
                   "queue)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1024}));
  command
      ->add_option("--slurmctld-grace", options->slurmctld_grace,
                   "with --slurm: seconds slurmctld may go unanswered before a job in flight is "
                   "answered as an error")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
  return [options]() -> int {
    auto resolved = resolve(*options);
    if (!resolved) {
      spdlog::error("{}", resolved.error().message);
      return 2;
    }
    return serve(*resolved);
  };
}

}  // namespace kiln::cli
