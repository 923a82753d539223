// Which runner a benchmark goes to. Configured runner URLs (KILN_RUNNER, else the
// runner_urls setting) come first, the one with the shortest queue: an explicit choice
// wins, and agents sharing a GPU machine share its `kiln runner` queue that way.
// Otherwise a GPU on this machine (a /dev/nvidiaN and a kiln-worker) gets an in-process
// runner: the same server code bound to 127.0.0.1 on a free port with a random token,
// started on first use, taking machine-wide GPU leases (GpuLease, in /tmp). With
// neither, an error that says how to set one up.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/runner/runner_client.h"

namespace kiln::runner {

class RunnerServer;

struct LocalRunnerSettings {
  std::vector<int> gpus;
  std::filesystem::path worker;
  std::filesystem::path cache_dir;
  std::filesystem::path lock_dir;  // GPU leases shared with other runners here; empty: none
};

struct RunnerSettings {
  std::vector<std::string> urls;             // remote runners, in order of preference on ties
  std::string token;                         // sent to every remote runner
  std::optional<LocalRunnerSettings> local;  // set when this machine has a GPU and a worker
};

// KILN_RUNNER (comma-separated URLs) wins over `configured_urls`; KILN_RUNNER_TOKEN is
// the token. The local GPU is probed (/dev/nvidiaN, `worker` executable) only when
// `probe_local` is set; `worker` empty means kiln-worker next to this executable.
RunnerSettings runner_settings_from_environment(const std::vector<std::string>& configured_urls,
                                                bool probe_local,
                                                const std::filesystem::path& worker = {});

// Splits "http://a:8000, http://b:8000" at commas, dropping blanks.
std::vector<std::string> split_runner_urls(const std::string& text);

// What a tool says when there is no runner at all.
std::string no_runner_message();

struct RunnerChoice {
  RunnerClient client;
  std::string label;  // the URL, or "local"
};

class RunnerSelector {
 public:
  explicit RunnerSelector(RunnerSettings settings);
  ~RunnerSelector();
  RunnerSelector(const RunnerSelector&) = delete;
  RunnerSelector& operator=(const RunnerSelector&) = delete;

  Result<RunnerChoice> choose();

 private:
  Result<RunnerChoice> local();
  Result<RunnerChoice> least_loaded();

  RunnerSettings settings_;
  std::mutex mutex_;  // guards the local server's start
  std::unique_ptr<RunnerServer> local_server_;
  std::string local_url_;
  std::string local_token_;
};

}  // namespace kiln::runner
