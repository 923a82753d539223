// Shared by the runner tests: the shared TempDir, an in-process runner that starts the
// fake worker, job bodies for the bundled fp16_gemm task, and process checks.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "kiln/runner/job_body.h"
#include "kiln/runner/runner_server.h"
#include "kiln/tasks/task.h"
#include "support/temp_dir.h"

namespace kiln::runner::testing {

using json = nlohmann::json;
using namespace std::chrono_literals;

using kiln::testing::read_text;
using kiln::testing::TempDir;

inline const tasks::Task& bundled_task() {
  static const tasks::Task task = [] {
    auto loaded = tasks::load_task(std::filesystem::path(KILN_TASKS_DIR) / "fp16_gemm");
    if (!loaded) throw std::runtime_error(loaded.error().message);
    return *loaded;
  }();
  return task;
}

// A candidate source that tells the fake worker what to do.
inline std::string fake_source(const std::string& mode, const std::string& argument = "") {
  return "// fake-worker: " + mode + (argument.empty() ? "" : " " + argument) +
         "\n#include <kiln/abi.h>\nextern \"C\" int kiln_launch(const kiln_tensor*, int, const "
         "kiln_scalar*, int, "
         "cudaStream_t) { return 0; }\n";
}

inline json job_body(const std::string& mode, const std::string& argument = "",
                     std::vector<std::string> workloads = {}, JobKind kind = JobKind::kBenchmark) {
  JobSpec spec;
  spec.kind = kind;
  spec.candidate_source = fake_source(mode, argument);
  spec.workloads = std::move(workloads);
  if (kind == JobKind::kProfile) spec.profile_workload = bundled_task().workloads.front().name;
  auto body = make_job_body(bundled_task(), spec);
  if (!body) throw std::runtime_error(body.error().message);
  return *body;
}

// True once the process is gone (or a zombie nobody has reaped yet).
inline bool process_gone(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close == std::string::npos || (close + 2 < stat.size() && stat[close + 2] == 'Z');
}

inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = 10s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return condition();
}

// An in-process runner on 127.0.0.1 with the fake worker.
class FakeRunner {
 public:
  explicit FakeRunner(std::vector<int> gpus = {0},
                      std::function<void(RunnerOptions&)> adjust = {}) {
    options_.host = "127.0.0.1";
    options_.port = 0;
    options_.gpus = std::move(gpus);
    options_.cache_dir = cache_.path();
    options_.worker = KILN_FAKE_WORKER;
    options_.discover_gpu_names = false;
    if (adjust) adjust(options_);
    server_ = std::make_unique<RunnerServer>(options_);
    auto url = server_->start();
    if (!url) throw std::runtime_error(url.error().message);
    url_ = *url;
    auto colon = url_.rfind(':');
    port_ = std::stoi(url_.substr(colon + 1));
  }

  const std::string& url() const { return url_; }
  int port() const { return port_; }
  const std::filesystem::path& cache() const { return cache_.path(); }
  const RunnerOptions& options() const { return options_; }
  void stop() { server_->stop(); }

  httplib::Client http() const {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(90, 0);
    if (options_.token) client.set_bearer_token_auth(*options_.token);
    return client;
  }

  // POST /v1/jobs; the reply's status and JSON body.
  std::pair<int, json> post(const json& body) const {
    auto client = http();
    auto reply = client.Post("/v1/jobs", body.dump(), "application/json");
    if (!reply) return {0, json()};
    return {reply->status, json::parse(reply->body, nullptr, false)};
  }

  std::string submit(const json& body) const {
    auto [status, reply] = post(body);
    if (status != 201)
      throw std::runtime_error("submit answered " + std::to_string(status) + ": " + reply.dump());
    return reply["id"].get<std::string>();
  }

  json get(const std::string& path) const {
    auto client = http();
    auto reply = client.Get(path.c_str());
    if (!reply) return json();
    return json::parse(reply->body, nullptr, false);
  }

  json wait(const std::string& id, int seconds = 60) const {
    return get("/v1/jobs/" + id + "?wait=" + std::to_string(seconds));
  }

  std::filesystem::path job_dir(const std::string& id) const { return cache_.path() / "jobs" / id; }

  // The fake worker's pid, once it has started.
  pid_t worker_pid(const std::string& id, const char* file = "fake_worker.pid") const {
    pid_t pid = 0;
    eventually([&] {
      std::string text = read_text(job_dir(id) / file);
      pid = text.empty() ? 0 : std::stoi(text);
      return pid > 0;
    });
    return pid;
  }

 private:
  TempDir cache_;
  RunnerOptions options_;
  std::unique_ptr<RunnerServer> server_;
  std::string url_;
  int port_ = 0;
};

}  // namespace kiln::runner::testing
