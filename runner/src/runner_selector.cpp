#include "kiln/runner/runner_selector.h"

#include <unistd.h>

#include <sstream>

#include "kiln/base/env.h"
#include "kiln/base/text.h"
#include "kiln/runner/gpu_discovery.h"
#include "kiln/runner/listen_address.h"
#include "kiln/runner/random_token.h"
#include "kiln/runner/runner_paths.h"
#include "kiln/runner/runner_server.h"

namespace kiln::runner {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::vector<std::string> split_runner_urls(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    if (const std::string_view url = trim(item); !url.empty()) out.emplace_back(url);
  }
  return out;
}

std::string no_runner_message() {
  return "no GPU runner is configured, and this machine has no GPU with kiln-worker. On a machine "
         "with a GPU run "
         "`kiln runner --gpus 0 --listen 0.0.0.0:8000 --token-file TOKEN_FILE` (or --listen "
         "127.0.0.1:8000 behind "
         "`ssh -L 8000:127.0.0.1:8000 gpu-host`), then start kiln here with "
         "KILN_RUNNER=http://gpu-host:8000 and "
         "KILN_RUNNER_TOKEN=<the token> in its environment (several runners: comma-separated "
         "URLs). Until then, "
         "check candidates with compile, simulate, synccheck and racecheck, which need no GPU.";
}

RunnerSettings runner_settings_from_environment(const std::vector<std::string>& configured_urls,
                                                bool probe_local, const fs::path& worker) {
  RunnerSettings settings;
  settings.urls = split_runner_urls(env_or("KILN_RUNNER", ""));
  if (settings.urls.empty()) settings.urls = configured_urls;
  settings.token = env_or("KILN_RUNNER_TOKEN", "");
  if (probe_local) {
    fs::path worker_path = worker.empty() ? default_worker_path() : worker;
    auto gpus = local_gpu_indices();
    if (!gpus.empty() && access(worker_path.c_str(), X_OK) == 0)
      settings.local = LocalRunnerSettings{gpus, worker_path, default_runner_cache_dir(),
                                           fs::temp_directory_path()};
  }
  return settings;
}

RunnerSelector::RunnerSelector(RunnerSettings settings) : settings_(std::move(settings)) {}

RunnerSelector::~RunnerSelector() = default;

Result<RunnerChoice> RunnerSelector::choose() {
  // Configured runners first: agents sharing a GPU machine share one queue only when they
  // all send their jobs to its `kiln runner`.
  if (!settings_.urls.empty()) return least_loaded();
  if (settings_.local) return local();
  return make_error(no_runner_message());
}

Result<RunnerChoice> RunnerSelector::local() {
  std::lock_guard lock(mutex_);
  if (!local_server_) {
    RunnerOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.gpus = settings_.local->gpus;
    options.worker = settings_.local->worker;
    options.cache_dir = settings_.local->cache_dir;
    options.lock_dir = settings_.local->lock_dir;
    local_token_ = random_token();  // other users of this machine cannot reach it
    options.token = local_token_;
    auto server = std::make_unique<RunnerServer>(options);
    auto url = server->start();
    if (!url) return make_error("starting the local GPU runner failed: " + url.error().message);
    local_server_ = std::move(server);
    local_url_ = *url;
  }
  return RunnerChoice{RunnerClient({local_url_, local_token_}), "local"};
}

Result<RunnerChoice> RunnerSelector::least_loaded() {
  std::optional<RunnerChoice> best;
  int64_t best_queue = 0, best_idle = 0;
  std::string failures;
  for (const auto& url : settings_.urls) {
    RunnerClient client({url, settings_.token});
    auto health = client.health(std::chrono::seconds(3));
    if (!health) {
      failures += "\n- " + health.error().message;
      continue;
    }
    const json& queue = (*health)["queue"];
    int64_t length = queue.is_object() ? queue.value("length", int64_t{0}) : 0;
    int64_t gpus =
        (*health)["gpus"].is_array() ? static_cast<int64_t>((*health)["gpus"].size()) : 0;
    int64_t idle = gpus - health->value("jobs_running", int64_t{0});
    if (!best || length < best_queue || (length == best_queue && idle > best_idle)) {
      best = RunnerChoice{client, url};
      best_queue = length;
      best_idle = idle;
    }
  }
  if (!best) return make_error("no configured runner answered:" + failures);
  return *best;
}

}  // namespace kiln::runner
