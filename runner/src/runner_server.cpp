#include "kiln/runner/runner_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <thread>

#include "kiln/base/json_text.h"
#include "kiln/base/sha256.h"
#include "kiln/http/listener.h"
#include "kiln/runner/content_cache.h"
#include "kiln/runner/gpu_discovery.h"
#include "kiln/runner/job_request.h"
#include "kiln/runner/job_scheduler.h"
#include "kiln/runner/listen_address.h"

namespace kiln::runner {

using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr double kMaxWaitSeconds = 60;
constexpr auto kCancelWait = 10s;

void reply(httplib::Response& response, int status, const json& body) {
  response.status = status;
  response.set_content(json_text(body), "application/json");
}

void reply_error(httplib::Response& response, int status, const std::string& message,
                 const std::string& field = "") {
  json body{{"error", message}};
  if (!field.empty()) body["field"] = field;
  reply(response, status, body);
}

// ?wait=S: seconds, 0..60; an absent parameter is 0.
std::optional<std::chrono::milliseconds> wait_parameter(const httplib::Request& request,
                                                        httplib::Response& response) {
  if (!request.has_param("wait")) return 0ms;
  std::string text = request.get_param_value("wait");
  try {
    size_t used = 0;
    double seconds = std::stod(text, &used);
    if (used != text.size() || !(seconds >= 0)) throw std::invalid_argument("wait");
    seconds = std::min(seconds, kMaxWaitSeconds);
    return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
  } catch (const std::exception&) {
    reply_error(response, 400, "wait=" + text + " is not a number of seconds (0 to 60)", "wait");
    return std::nullopt;
  }
}

}  // namespace

class RunnerServer::Impl {
 public:
  explicit Impl(RunnerOptions options)
      : options_(std::move(options)),
        cache_(options_.cache_dir),
        listener_(listener_options(options_)),
        http_(listener_.server()) {}

  ~Impl() { stop(); }

  Result<int> bind() {
    if (auto checked = listener_.check_address(); !checked) return checked.error();
    if (options_.slurm) {
      // Slots, not GPUs: Slurm places each job on a GPU of its own.
      options_.gpus.clear();
      for (size_t slot = 0; slot < std::max<size_t>(options_.slurm_slots, 1); ++slot)
        options_.gpus.push_back(static_cast<int>(slot));
      options_.lock_dir.clear();
      options_.discover_gpu_names = false;
    }
    if (options_.gpus.empty())
      return make_error("no GPUs to run jobs on; pass --gpus, e.g. --gpus 0,1");
    auto worker_hash = sha256_file(options_.worker);
    if (!worker_hash)
      return make_error("no worker at " + options_.worker.string() +
                        "; build kiln-worker (runner/worker) or pass --worker PATH");
    if (auto prepared = cache_.prepare(); !prepared) return prepared.error();
    gpu_info_ = options_.discover_gpu_names ? discover_gpus(options_.gpus) : GpuDiscovery{};
    if (gpu_info_.gpus.empty())
      for (int index : options_.gpus) gpu_info_.gpus.push_back({index, ""});

    SchedulerOptions scheduler;
    scheduler.gpus = options_.gpus;
    scheduler.queue_limit = options_.queue_limit;
    scheduler.worker = options_.worker;
    scheduler.worker_sha256 = *worker_hash;
    scheduler.simulated_worker = options_.simulated_worker;
    scheduler.retained_jobs = options_.retained_jobs;
    scheduler.lock_dir = options_.lock_dir;
    if (options_.slurm) {
      SlurmCommandRunner* commands = options_.slurm_commands;
      if (!commands) {
        real_commands_ = std::make_unique<ProcessSlurmCommandRunner>();
        commands = real_commands_.get();
      }
      slurm_backend_ = std::make_unique<SlurmBackend>(*commands, options_.slurm->job.partition);
      slurm_ = std::make_unique<SlurmExecutor>(*slurm_backend_, *options_.slurm);
      scheduler.execute = [this](const JobLaunch& launch, const std::atomic<bool>& cancel,
                                 const std::function<void(json)>& on_event) {
        return slurm_->execute(launch, cancel, on_event);
      };
    }
    scheduler_ = std::make_unique<JobScheduler>(scheduler, cache_);
    routes();
    auto port = listener_.bind();
    if (!port) return port.error();
    scheduler_->start();
    return port;
  }

  void serve() { listener_.serve(); }

  void stop() {
    if (scheduler_) scheduler_->stop();  // first: wakes long polls, kills workers
    listener_.stop();
    if (thread_.joinable()) thread_.join();
  }

  Result<std::string> start() {
    auto port = bind();
    if (!port) return port.error();
    thread_ = std::thread([this] { serve(); });
    return url();
  }

  std::string url() const { return runner_url({options_.host, listener_.port()}); }

 private:
  static http::ListenerOptions listener_options(const RunnerOptions& options) {
    http::ListenerOptions listener;
    listener.host = options.host;
    listener.port = options.port;
    listener.guard.bearer_token = options.token;
    listener.address_flag = "--listen HOST:PORT";
    listener.token_advice =
        "pass --token-file FILE (clients send it via KILN_RUNNER_TOKEN), or listen on 127.0.0.1 "
        "and reach it through an SSH tunnel";
    listener.max_request_bytes = options.max_request_bytes;
    listener.threads = 32;
    listener.keep_alive_seconds = 2;
    return listener;
  }

  void routes() {
    http_.Get("/v1/health", [this](const httplib::Request& q, httplib::Response& r) {
      if (guard(q, r)) health(r);
    });
    http_.Post("/v1/jobs", [this](const httplib::Request& q, httplib::Response& r) {
      if (guard(q, r)) submit(q, r);
    });
    http_.Get(R"(/v1/jobs/([A-Za-z0-9-]{1,64}))",
              [this](const httplib::Request& q, httplib::Response& r) {
                if (!guard(q, r)) return;
                auto wait = wait_parameter(q, r);
                if (!wait) return;
                found_or_404(r, q.matches[1], scheduler_->job(q.matches[1], *wait));
              });
    http_.Get(R"(/v1/jobs/([A-Za-z0-9-]{1,64})/events)", [this](const httplib::Request& q,
                                                                httplib::Response& r) {
      if (!guard(q, r)) return;
      auto wait = wait_parameter(q, r);
      if (!wait) return;
      int64_t after = 0;
      if (q.has_param("after")) {
        std::string text = q.get_param_value("after");
        if (text.empty() || text.size() > 12 ||
            text.find_first_not_of("0123456789") != std::string::npos)
          return reply_error(
              r, 400, "after=" + text + " is not an event sequence number (0 or more)", "after");
        after = std::stoll(text);
      }
      found_or_404(r, q.matches[1], scheduler_->events(q.matches[1], after, *wait));
    });
    http_.Delete(R"(/v1/jobs/([A-Za-z0-9-]{1,64}))",
                 [this](const httplib::Request& q, httplib::Response& r) {
                   if (!guard(q, r)) return;
                   found_or_404(r, q.matches[1], scheduler_->cancel(q.matches[1], kCancelWait));
                 });
    http_.set_error_handler([](const httplib::Request& q, httplib::Response& r) {
      if (!r.body.empty()) return;
      if (r.status == 404)
        reply_error(r, 404,
                    "no such endpoint: " + q.method + " " + q.path +
                        "; see runner/protocol/PROTOCOL.md (GET /v1/health, POST /v1/jobs, ...)");
      else if (r.status == 413)
        reply_error(r, 413,
                    "request too large; the runner takes bodies up to its --max-request-bytes");
      else if (r.status == 400)
        reply_error(r, 400, "malformed HTTP request");
    });
    http_.set_exception_handler(
        [](const httplib::Request&, httplib::Response& r, std::exception_ptr error) {
          std::string what = http::exception_text(error);
          spdlog::error("runner: HTTP handler failed: {}", what);
          reply_error(r, 500, "internal error: " + what);
        });
  }

  bool guard(const httplib::Request& request, httplib::Response& response) {
    auto verdict = listener_.guard(request, response);
    if (verdict.status == 0) return true;
    spdlog::warn("runner: refused {} {} from {}: {}", request.method, request.path,
                 request.remote_addr, verdict.message);
    reply_error(response, verdict.status, verdict.message);
    return false;
  }

  static void found_or_404(httplib::Response& response, const std::string& id,
                           const std::optional<json>& body) {
    if (body) return reply(response, 200, *body);
    reply_error(response, 404,
                "no job " + id +
                    " on this runner (unknown, or ended long ago and forgotten); submit it again");
  }

  void health(httplib::Response& response) {
    json status = scheduler_->status();
    for (auto& gpu : status["gpus"]) {
      gpu["name"] = nullptr;
      for (const auto& info : gpu_info_.gpus)
        if (info.index == gpu["index"].get<int>() && !info.name.empty()) gpu["name"] = info.name;
    }
    status["version"] = KILN_RUNNER_VERSION;
    status["driver"] = gpu_info_.driver.empty() ? json(nullptr) : json(gpu_info_.driver);
    status["cuda"] = gpu_info_.cuda.empty() ? json(nullptr) : json(gpu_info_.cuda);
    if (slurm_) {
      status["backend"] = "slurm";
      status["slurm"] = slurm_->health();
    }
    status["limits"] = {{"job_seconds", options_.job_seconds},
                        {"max_request_bytes", options_.max_request_bytes}};
    reply(response, 200, status);
  }

  void submit(const httplib::Request& request, httplib::Response& response) {
    // Bounded: a deeply nested body would overflow the stack of the reader that prints it.
    auto body = parse_json_bounded(request.body);
    if (!body)
      return reply_error(
          response, 400,
          "the body " + body.error().message + "; send a job object (runner/protocol/PROTOCOL.md)");
    auto parsed = parse_job_request(*body, options_.job_seconds);
    if (auto* error = std::get_if<FieldError>(&parsed))
      return reply_error(response, 400, error->text(), error->field);
    JobRequest& job = std::get<JobRequest>(parsed);

    std::string candidate_sha256 = sha256_hex(job.candidate_source);
    if (candidate_sha256 != job.candidate_sha256)
      return reply_error(response, 409,
                         "candidate.sha256 is " + job.candidate_sha256 +
                             " but the source hashes to " + candidate_sha256 +
                             "; send the SHA-256 of the exact bytes of candidate.source",
                         "candidate.sha256");
    if (!job.incumbent_source.empty() && sha256_hex(job.incumbent_source) != job.incumbent_sha256)
      return reply_error(response, 409,
                         "incumbent.sha256 is " + job.incumbent_sha256 +
                             " but the source hashes to " + sha256_hex(job.incumbent_source) +
                             "; send the SHA-256 of the exact bytes of incumbent.source",
                         "incumbent.sha256");
    auto staged = cache_.stage_task(job.task_name, job.task_files);
    if (!staged) return reply_error(response, 500, staged.error().message);
    auto loaded = tasks::load_task(staged->bundle_dir());
    if (!loaded)
      return reply_error(response, 400,
                         "task.files do not form a valid task bundle: " + loaded.error().message,
                         "task.files");
    if (loaded->sha256 != job.task_sha256)
      return reply_error(response, 409,
                         "task.sha256 is " + job.task_sha256 + " but the files hash to " +
                             loaded->sha256 +
                             " (computed as kiln_tasks does); send the bundle exactly as hashed",
                         "task.sha256");
    if (auto extra = unhashed_file(*loaded, job.task_files))
      return reply_error(
          response, 400,
          "'" + *extra +
              "' is not one of the bundle's files (task.json and the files it names); leave it out",
          "task.files." + *extra);
    for (size_t i = 0; i < job.workloads.size(); ++i)
      if (!has_workload(*loaded, job.workloads[i]))
        return reply_error(response, 400,
                           "'" + job.workloads[i] + "' is not a workload of task " + loaded->name,
                           "workloads[" + std::to_string(i) + "]");
    if (!job.sanitize_workload.empty() && !has_workload(*loaded, job.sanitize_workload))
      return reply_error(
          response, 400,
          "'" + job.sanitize_workload + "' is not a workload of task " + loaded->name,
          "sanitize.workload");
    if (job.kind == JobKind::kProfile && !has_workload(*loaded, job.profile_workload))
      return reply_error(response, 400,
                         "'" + job.profile_workload + "' is not a workload of task " + loaded->name,
                         "profile.workload");

    auto task = cache_.commit_task(std::move(*staged), loaded->sha256);
    if (!task) return reply_error(response, 500, task.error().message);
    auto candidate = cache_.store_candidate(job.candidate_source, candidate_sha256);
    if (!candidate) return reply_error(response, 500, candidate.error().message);
    std::filesystem::path incumbent;
    if (!job.incumbent_source.empty()) {
      auto stored = cache_.store_candidate(job.incumbent_source, job.incumbent_sha256);
      if (!stored) return reply_error(response, 500, stored.error().message);
      incumbent = *stored;
    }

    SubmitOutcome outcome = scheduler_->submit(job, *task, *candidate, incumbent);
    switch (outcome.kind) {
      case SubmitOutcome::Kind::kQueued:
        return reply(response, 201,
                     {{"id", outcome.id}, {"state", "queued"}, {"position", outcome.position}});
      case SubmitOutcome::Kind::kQueueFull:
        response.set_header("Retry-After", "30");
        return reply_error(response, 429, outcome.error);
      case SubmitOutcome::Kind::kFailed:
        return reply_error(response, 503, outcome.error);
    }
  }

  static bool has_workload(const tasks::Task& task, const std::string& name) {
    for (const auto& workload : task.workloads)
      if (workload.name == name) return true;
    return false;
  }

  // A sent file outside the hashed bundle: it would reach the worker without being hashed.
  static std::optional<std::string> unhashed_file(const tasks::Task& task,
                                                  const std::map<std::string, std::string>& files) {
    std::vector<std::string> hashed;
    for (const auto& path : tasks::bundle_files(task))
      hashed.push_back(path.lexically_relative(task.dir).generic_string());
    for (const auto& [name, contents] : files)
      if (std::find(hashed.begin(), hashed.end(), name) == hashed.end()) return name;
    return std::nullopt;
  }

  RunnerOptions options_;
  ContentCache cache_;
  http::Listener listener_;
  httplib::Server& http_;  // listener_'s, for the routes
  GpuDiscovery gpu_info_;
  std::unique_ptr<ProcessSlurmCommandRunner> real_commands_;
  std::unique_ptr<SlurmBackend> slurm_backend_;
  std::unique_ptr<SlurmExecutor> slurm_;
  std::unique_ptr<JobScheduler> scheduler_;  // after slurm_: its dispatchers call it
  std::thread thread_;
};

RunnerServer::RunnerServer(RunnerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
RunnerServer::~RunnerServer() = default;
Result<int> RunnerServer::bind() { return impl_->bind(); }
void RunnerServer::serve() { impl_->serve(); }
void RunnerServer::stop() { impl_->stop(); }
Result<std::string> RunnerServer::start() { return impl_->start(); }
std::string RunnerServer::url() const { return impl_->url(); }

}  // namespace kiln::runner
