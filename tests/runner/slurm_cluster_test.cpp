// `kiln runner --slurm` against a real single-node Slurm cluster on loopback
// (scripts/slurm_test_cluster.sh; ctest label `slurm`, needs root and Debian's slurmctld,
// slurmd, slurm-client and munge): a verify job of kiln-worker-sim end to end, a benchmark
// refused by the sim worker (through the runner's client, and as an MCP tools/call of `kiln
// mcp`), a job cancelled by scancel, a job killed by Slurm's time limit,
// and slurmctld stopped mid-job. The measurement of jobs per minute through Slurm against the
// local runner is DISABLED_ (run it by hand, runner/README.md "Slurm" says how).
#include <gmock/gmock.h>
#include <stdlib.h>

#include <map>
#include <regex>
#include <sstream>

#include "kiln/base/file.h"
#include "kiln/base/process.h"
#include "kiln/base/sha256.h"
#include "kiln/replay/stdio_connection.h"
#include "kiln/runner/job_body.h"
#include "kiln/runner/protocol/simulated_worker.h"
#include "kiln/runner/runner_client.h"
#include "kiln_process.h"
#include "runner_fixture.h"

namespace kiln::runner {
namespace {

namespace fs = std::filesystem;
using namespace kiln::runner::testing;
using ::testing::HasSubstr;
using ::testing::Not;

// One cluster per test process (ctest runs each test in its own).
class SlurmCluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (getuid() != 0 || !fs::exists("/usr/sbin/slurmctld") || !fs::exists("/usr/bin/sbatch")) {
      skip_ = "needs root and Debian's slurmctld, slurmd, slurm-client and munge";
      return;
    }
    dir_ = new TempDir();
    ProcessSpec spec;
    spec.argv = {KILN_SLURM_CLUSTER_SCRIPT, "start", (dir_->path() / "slurm").string()};
    std::string out;
    ProcessOutput output;
    output.on_stdout = [&](std::string_view chunk) {
      out.append(chunk);
      return true;
    };
    output.on_stderr = [&](std::string_view chunk) { out.append(chunk); };
    ProcessLimits limits;
    limits.deadline = std::chrono::steady_clock::now() + 60s;
    auto exit = run_supervised(spec, limits, output);
    if (exit.how != ProcessExit::How::kExited || exit.exit_code != 0) {
      start_error_ = "the test cluster did not start: " + out;
      return;
    }
    setenv("SLURM_CONF", (dir_->path() / "slurm" / "slurm.conf").c_str(), 1);
  }
  static void TearDownTestSuite() {
    if (!dir_) return;
    ProcessSpec spec;
    spec.argv = {KILN_SLURM_CLUSTER_SCRIPT, "stop", (dir_->path() / "slurm").string()};
    run_supervised(spec);
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(start_error_.empty()) << start_error_;
  }

  static fs::path slurm_dir() { return dir_->path() / "slurm"; }

  // `kiln runner --slurm` on partition kiln without GPUs; its cache (and so its job folders)
  // inside the test's folder, which the one node shares by being this machine.
  std::unique_ptr<KilnProcess> start_runner(const std::string& worker,
                                            std::vector<std::string> extra = {}) {
    std::vector<std::string> args{
        "runner",      "--slurm",
        "--partition", "kiln",
        "--gres",      "none",
        "--listen",    "127.0.0.1:0",
        "--worker",    worker,
        "--cache-dir", (dir_->path() / ("cache" + std::to_string(++runners_))).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    auto kiln = std::make_unique<KilnProcess>(args);
    url_ = kiln->wait_for(std::regex("runner listening on (http://127\\.0\\.0\\.1:[0-9]+)"));
    return kiln;
  }

  static json sim_body(const std::string& task_name, JobKind kind) {
    auto task = tasks::load_task(fs::path(KILN_TASKS_DIR) / task_name);
    if (!task) throw std::runtime_error(task.error().message);
    auto source = read_file(task->dir / "starter.cu");
    if (!source) throw std::runtime_error(source.error().message);
    JobSpec spec;
    spec.kind = kind;
    spec.candidate_source = *source;
    // No workloads named: the sim worker runs the task's sim_workloads.
    auto body = make_job_body(*task, spec);
    if (!body) throw std::runtime_error(body.error().message);
    return *body;
  }

  std::string url_;
  static inline TempDir* dir_ = nullptr;
  static inline std::string skip_;
  static inline std::string start_error_;
  static inline int runners_ = 0;
};

// kiln-worker-sim runs the task's sim_workloads in place of its workloads; a runner started
// with --simulated-worker checks its results against those. The verify goes out as a Slurm job,
// comes back through the shared folder and passes the same result check as a local job; without
// the flag that check refuses the stand-in workload names.
TEST_F(SlurmCluster, VerifyJobOfTheSimWorkerPassesThroughSlurm) {
  auto kiln = start_runner(KILN_WORKER_SIM, {"--simulated-worker"});
  ASSERT_FALSE(url_.empty()) << kiln->err();
  RunnerClient client({url_, ""});
  auto health = client.health();
  ASSERT_TRUE(health) << health.error().message;
  EXPECT_EQ((*health)["backend"], "slurm");
  EXPECT_EQ((*health)["slurm"]["partition"], "kiln");
  EXPECT_EQ((*health)["slurm"]["nodes"], 1) << health->dump();
  EXPECT_EQ((*health)["slurm"]["gpus"], 0);

  auto outcome = client.run(sim_body("rmsnorm", JobKind::kVerify), {});
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->state, "finished");
  EXPECT_EQ(outcome->result["stage"], "done") << outcome->result.dump();
  EXPECT_EQ(outcome->result["status"], "passed") << outcome->result.dump();
  EXPECT_FALSE(outcome->result["summary"]["scored"].get<bool>());  // the simulator never scores
  EXPECT_FALSE(
      kiln->wait_for(std::regex("job " + outcome->job_id + " is Slurm job [0-9]+")).empty())
      << kiln->err();
}

TEST_F(SlurmCluster, WithoutTheFlagTheSimWorkersWorkloadsAreRefused) {
  auto kiln = start_runner(KILN_WORKER_SIM);
  ASSERT_FALSE(url_.empty()) << kiln->err();
  RunnerClient client({url_, ""});
  auto outcome = client.run(sim_body("rmsnorm", JobKind::kVerify), {});
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->result["reason"], "invalid_result") << outcome->result.dump();
  EXPECT_THAT(outcome->result["error"].get<std::string>(),
              HasSubstr("is not a workload this job asked for"));
}

TEST_F(SlurmCluster, BenchmarkOnTheSimWorkerComesBackAsItsRefusal) {
  auto kiln = start_runner(KILN_WORKER_SIM, {"--simulated-worker"});
  ASSERT_FALSE(url_.empty()) << kiln->err();
  RunnerClient client({url_, ""});
  auto outcome = client.run(sim_body("rmsnorm", JobKind::kBenchmark), {});
  ASSERT_TRUE(outcome) << outcome.error().message;
  // Not a Slurm failure nor the runner's verdict: the sim worker ran on the node, and its own
  // answer came back through the shared folder and the runner's result check.
  EXPECT_EQ(outcome->result["status"], "error") << outcome->result.dump();
  EXPECT_FALSE(outcome->result.contains("reason")) << outcome->result.dump();
  EXPECT_EQ(outcome->result["error"], protocol::simulated_worker_refusal(JobKind::kBenchmark));
  EXPECT_FALSE(
      kiln->wait_for(std::regex("job " + outcome->job_id + " is Slurm job [0-9]+")).empty());
}

// What an agent sees, end to end: `kiln mcp` on stdio with KILN_RUNNER at `kiln runner --slurm
// --simulated-worker`, a real MCP session (initialize, tools/call benchmark). The job runs as a
// Slurm job (squeue still holds it, COMPLETED), kiln-worker-sim refuses to time it, and the
// refusal passes the runner's result check and reaches the agent in the worker's words, with a
// stored result id.
TEST_F(SlurmCluster, McpBenchmarkCallRunsAsASlurmJobAndAnswersInTheSimWorkersWords) {
  auto runner = start_runner(KILN_WORKER_SIM, {"--simulated-worker"});
  ASSERT_FALSE(url_.empty()) << runner->err();
  setenv("KILN_RUNNER", url_.c_str(), 1);
  setenv("KILN_CACHE_DIR", (dir_->path() / "mcp-cache").c_str(), 1);
  auto server = replay::StdioConnection::start(
      {KILN_BIN, "--tasks-dir", KILN_TASKS_DIR, "--log-level", "warn", "mcp"});
  unsetenv("KILN_RUNNER");
  ASSERT_TRUE(server) << server.error().message;
  auto ask = [&](const json& message, std::chrono::seconds within) -> json {
    EXPECT_TRUE((*server)->send(message));
    if (!message.contains("id")) return {};
    const auto deadline = replay::Clock::now() + within;
    while (auto answer = (*server)->receive(deadline))  // notifications come first
      if (answer->value("id", json()) == message["id"]) return *answer;
    ADD_FAILURE() << "no answer to " << message["method"] << ": " << (*server)->closed();
    return {};
  };
  json hello = ask({{"jsonrpc", "2.0"},
                    {"id", 1},
                    {"method", "initialize"},
                    {"params",
                     {{"protocolVersion", "2025-11-25"},
                      {"capabilities", json::object()},
                      {"clientInfo", {{"name", "slurm-test"}, {"version", "0"}}}}}},
                   60s);
  ASSERT_TRUE(hello.contains("result")) << hello.dump();
  ask({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, 0s);
  auto starter = read_file(fs::path(KILN_TASKS_DIR) / "rmsnorm" / "starter.cu");
  ASSERT_TRUE(starter);
  const auto started = std::chrono::steady_clock::now();
  json answer =
      ask({{"jsonrpc", "2.0"},
           {"id", 2},
           {"method", "tools/call"},
           {"params",
            {{"name", "benchmark"}, {"arguments", {{"task", "rmsnorm"}, {"source", *starter}}}}}},
          240s);
  std::printf("MCP benchmark through Slurm answered in %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  ASSERT_TRUE(answer.contains("result")) << answer.dump();
  const json& result = answer["result"];
  EXPECT_TRUE(result.value("isError", false)) << result.dump();
  const json& structured = result["structuredContent"];
  EXPECT_EQ(structured["status"], "error") << structured.dump();
  EXPECT_EQ(structured["stage"], "start") << structured.dump();
  EXPECT_FALSE(structured.value("result_id", "").empty()) << structured.dump();
  const std::string text = result["content"][0].value("text", "");
  EXPECT_THAT(text, HasSubstr("verifies candidates on the CPU simulator but does not time them"));
  EXPECT_THAT(text, HasSubstr("Point KILN_RUNNER at a runner with kiln-worker on a GPU"));
  EXPECT_THAT(text, Not(HasSubstr("invalid result")));

  // The runner's record: this job was a Slurm job, and Slurm says it completed.
  const std::string job_id = structured.value("job_id", "");
  ASSERT_FALSE(job_id.empty());
  const std::string slurm_id =
      runner->wait_for(std::regex("job " + job_id + " is Slurm job ([0-9]+)"));
  ASSERT_FALSE(slurm_id.empty()) << runner->err();
  ProcessSpec squeue;
  squeue.argv = {"/usr/bin/squeue", "-h", "--states=all", "-j", slurm_id, "-o", "%T"};
  std::string state;
  ProcessOutput output;
  output.on_stdout = [&](std::string_view chunk) {
    state.append(chunk);
    return true;
  };
  ASSERT_EQ(run_supervised(squeue, {}, output).exit_code, 0);
  EXPECT_EQ(state, "COMPLETED\n");
  (*server)->finish();
}

TEST_F(SlurmCluster, JobCancelledByScancelIsReportedAsCancelledBySlurm) {
  auto kiln = start_runner(KILN_FAKE_WORKER);
  ASSERT_FALSE(url_.empty()) << kiln->err();
  RunnerClient client({url_, ""});
  auto submitted = client.submit(job_body("hang"));
  ASSERT_TRUE(submitted) << submitted.error().message;
  std::string slurm_id =
      kiln->wait_for(std::regex("job " + submitted->id + " is Slurm job ([0-9]+)"));
  ASSERT_FALSE(slurm_id.empty()) << kiln->err();
  // Once the worker is running on the node, cancel it the way a user or admin would.
  ASSERT_TRUE(eventually(
      [&] {
        return fs::exists(dir_->path() / ("cache" + std::to_string(runners_)) / "jobs" /
                          submitted->id / "fake_worker.pid");
      },
      60s));
  ProcessSpec scancel;
  scancel.argv = {"/usr/bin/scancel", slurm_id};
  ASSERT_EQ(run_supervised(scancel).exit_code, 0);
  auto job = client.job(submitted->id, 60);
  ASSERT_TRUE(job) << job.error().message;
  EXPECT_EQ((*job)["state"], "cancelled") << job->dump();
  EXPECT_EQ((*job)["result"]["reason"], "cancelled");
  EXPECT_THAT((*job)["result"]["error"].get<std::string>(), HasSubstr("cancelled by Slurm"));
}

TEST_F(SlurmCluster, JobPastItsTimeLimitIsKilledBySlurmAndReportedAsTimeout) {
  auto kiln = start_runner(KILN_FAKE_WORKER, {"--time-limit", "2"});
  ASSERT_FALSE(url_.empty()) << kiln->err();
  RunnerClient client({url_, ""});
  auto submitted = client.submit(job_body("hang"));
  ASSERT_TRUE(submitted) << submitted.error().message;
  json job;
  // Slurm rounds the 2 s up to a minute, checks limits every 30 s or so, and kills after
  // KillWait (2 s here).
  ASSERT_TRUE(eventually(
      [&] {
        auto got = client.job(submitted->id, 10);
        if (got) job = *got;
        return got && job["state"] != "queued" && job["state"] != "running";
      },
      150s));
  EXPECT_EQ(job["result"]["reason"], "timeout") << job.dump();
  EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr("Slurm's time limit (1 min)"));
}

TEST_F(SlurmCluster, SlurmctldStoppedMidJobIsAnErrorWithinTheGrace) {
  auto kiln = start_runner(KILN_FAKE_WORKER, {"--slurmctld-grace", "3"});
  ASSERT_FALSE(url_.empty()) << kiln->err();
  RunnerClient client({url_, ""});
  auto submitted = client.submit(job_body("hang"));
  ASSERT_TRUE(submitted) << submitted.error().message;
  ASSERT_FALSE(kiln->wait_for(std::regex("job " + submitted->id + " is Slurm job")).empty());
  auto pid_text = read_file(slurm_dir() / "slurmctld.pid");
  std::string pid = pid_text ? *pid_text : "";
  ASSERT_FALSE(pid.empty());
  ASSERT_EQ(kill(std::stoi(pid), SIGTERM), 0);
  json job;
  ASSERT_TRUE(eventually(
      [&] {
        auto got = client.job(submitted->id, 10);
        if (got) job = *got;
        return got && job["state"] == "finished";
      },
      90s));
  EXPECT_EQ(job["result"]["reason"], "scheduler") << job.dump();
  EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr("Slurm stopped answering"));
}

// slurmctld's own count of the RPCs it served and the time it spent on them (sdiag, since the
// last `sdiag --reset`): message type -> {count, total microseconds}.
std::map<std::string, std::pair<long, long>> controller_rpcs() {
  ProcessSpec sdiag;
  sdiag.argv = {"/usr/bin/sdiag"};
  std::string out;
  ProcessOutput output;
  output.on_stdout = [&](std::string_view chunk) {
    out.append(chunk);
    return true;
  };
  run_supervised(sdiag, {}, output);
  std::map<std::string, std::pair<long, long>> rpcs;
  const std::regex line(
      R"(^\s+([A-Z_]+)\s+\(\s*\d+\)\s+count:(\d+)\s+ave_time:\d+\s+total_time:(\d+))");
  std::istringstream in(out.substr(0, out.find("by user")));
  std::string text;
  std::smatch match;
  while (std::getline(in, text))
    if (std::regex_search(text, match, line))
      rpcs[match[1].str()] = {std::stol(match[2].str()), std::stol(match[3].str())};
  return rpcs;
}

void reset_controller_rpcs() {
  ProcessSpec reset;
  reset.argv = {"/usr/bin/sdiag", "--reset"};
  run_supervised(reset);
}

void print_controller_rpcs(const char* phase, int jobs) {
  long count = 0, micros = 0;
  std::string detail;
  for (const auto& [name, value] : controller_rpcs()) {
    count += value.first;
    micros += value.second;
    detail += " " + name + "=" + std::to_string(value.first);
  }
  std::printf("%s: slurmctld served %ld RPCs in %.1f ms (%.1f RPCs, %.2f ms per job):%s\n", phase,
              count, micros / 1000.0, static_cast<double>(count) / jobs, micros / 1000.0 / jobs,
              detail.c_str());
}

// Jobs per minute and added latency: the same trivial job (the fake worker's `pass`), one at a
// time, through a local runner and through Slurm; then 16 at once through Slurm (8 slots, on a
// node of 2 CPUs), with slurmctld's count of the RPCs each phase cost it (sdiag). Prints the
// numbers; asserts only that the jobs passed.
TEST_F(SlurmCluster, DISABLED_MeasureJobsPerMinuteAgainstTheLocalRunner) {
  const int jobs = 20;
  auto measure = [&](const std::string& url) {
    RunnerClient client({url, ""});
    client.set_poll_seconds(0.05);
    auto started = std::chrono::steady_clock::now();
    for (int i = 0; i < jobs; ++i) {
      auto outcome = client.run(job_body("pass", "", {"16x4096x4096"}), {});
      EXPECT_TRUE(outcome && outcome->result["status"] == "passed");
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  KilnProcess local({"runner", "--gpus", "0", "--listen", "127.0.0.1:0", "--worker",
                     KILN_FAKE_WORKER, "--cache-dir", (dir_->path() / "local").string()});
  std::string local_url =
      local.wait_for(std::regex("runner listening on (http://127\\.0\\.0\\.1:[0-9]+)"));
  ASSERT_FALSE(local_url.empty()) << local.err();
  double local_s = measure(local_url);
  auto kiln = start_runner(KILN_FAKE_WORKER);
  ASSERT_FALSE(url_.empty()) << kiln->err();
  reset_controller_rpcs();
  double slurm_s = measure(url_);
  std::printf("local: %d jobs in %.2f s = %.1f jobs/min (%.3f s/job)\n", jobs, local_s,
              jobs * 60 / local_s, local_s / jobs);
  std::printf("slurm: %d jobs in %.2f s = %.1f jobs/min (%.3f s/job)\n", jobs, slurm_s,
              jobs * 60 / slurm_s, slurm_s / jobs);
  std::printf("added latency per job: %.3f s\n", (slurm_s - local_s) / jobs);
  print_controller_rpcs("slurm, one at a time", jobs);

  // Many in flight: the runner keeps 8 in Slurm and polls them in one squeue per 0.5 s.
  const int burst = 16;
  RunnerClient client({url_, ""});
  reset_controller_rpcs();
  auto started = std::chrono::steady_clock::now();
  std::vector<std::string> ids;
  for (int i = 0; i < burst; ++i) {
    auto submitted = client.submit(job_body("pass", "", {"16x4096x4096"}));
    ASSERT_TRUE(submitted) << submitted.error().message;
    ids.push_back(submitted->id);
  }
  for (const auto& id : ids) {
    json job;
    ASSERT_TRUE(eventually(
        [&] {
          auto got = client.job(id, 5);
          if (got) job = *got;
          return got && job["state"] == "finished";
        },
        300s));
    EXPECT_EQ(job["result"]["status"], "passed") << job.dump();
  }
  double burst_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("slurm, %d at once: %.2f s = %.1f jobs/min\n", burst, burst_s, burst * 60 / burst_s);
  print_controller_rpcs("slurm, 16 at once", burst);
}

}  // namespace
}  // namespace kiln::runner
