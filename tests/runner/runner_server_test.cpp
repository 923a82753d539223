// `kiln runner`'s HTTP API end to end, with the fake worker: scheduling, limits, bad
// requests, worker failures, cancel, long polls, events, tokens, malformed HTTP.
#include "kiln/runner/runner_server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "kiln/base/sha256.h"
#include "kiln/runner/protocol/simulated_worker.h"
#include "runner_fixture.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;
using ::testing::HasSubstr;

TEST(RunnerServer, SubmittedJobFinishesWithTheWorkersResult) {
  FakeRunner runner;
  auto [status, reply] = runner.post(job_body("pass"));
  ASSERT_EQ(status, 201) << reply.dump();
  EXPECT_EQ(reply["state"], "queued");
  EXPECT_EQ(reply["id"].get<std::string>().rfind("j-", 0), 0u);
  json job = runner.wait(reply["id"]);
  EXPECT_EQ(job["state"], "finished");
  EXPECT_EQ(job["stage"], "done");
  EXPECT_EQ(job["gpu"], 0);
  EXPECT_EQ(job["result"]["status"], "passed") << job.dump();
  EXPECT_EQ(job["result"]["workloads"].size(), bundled_task().workloads.size());
  EXPECT_EQ(job["result"]["summary"]["scored"], true);
  EXPECT_EQ(job["result"]["task"]["sha256"], bundled_task().sha256);
}

TEST(RunnerServer, ASimulatedWorkersResultIsCheckedAgainstTheSimWorkloads) {
  // kiln-worker-sim answers with the task's sim_workloads: a runner told so accepts them, one
  // that is not refuses the result as naming workloads the job did not ask for.
  FakeRunner simulated({0}, [](RunnerOptions& o) { o.simulated_worker = true; });
  json job = simulated.wait(simulated.submit(job_body("sim", "", {}, JobKind::kVerify)));
  EXPECT_EQ(job["result"]["status"], "passed") << job.dump();
  EXPECT_EQ(job["result"]["workloads"].size(), bundled_task().sim_workloads.size());
  FakeRunner plain;
  job = plain.wait(plain.submit(job_body("sim", "", {}, JobKind::kVerify)));
  EXPECT_EQ(job["result"]["reason"], "invalid_result") << job.dump();
}

TEST(RunnerServer, ABenchmarkOnTheSimulatedWorkerComesBackInItsOwnWords) {
  // kiln-worker-sim refuses a job that needs a GPU with a result of this job; the runner's check
  // passes it on as the worker wrote it: what the simulated worker does, and where to go instead.
  FakeRunner simulated({0}, [](RunnerOptions& o) { o.simulated_worker = true; });
  for (JobKind kind : {JobKind::kBenchmark, JobKind::kProfile}) {
    json job = simulated.wait(simulated.submit(job_body("sim", "", {}, kind)));
    EXPECT_EQ(job["state"], "finished") << job.dump();
    EXPECT_EQ(job["result"]["status"], "error") << job.dump();
    EXPECT_FALSE(job["result"].contains("reason")) << job.dump();  // not the runner's verdict
    EXPECT_EQ(job["result"]["stage"], "start");
    EXPECT_EQ(job["result"]["error"], protocol::simulated_worker_refusal(kind));
    EXPECT_THAT(job["result"]["error"].get<std::string>(),
                HasSubstr("verifies candidates on the CPU simulator but does not time them"));
    EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr("Point KILN_RUNNER at"));
  }
}

TEST(RunnerServer, WritesJobFileAndCachesByContentHash) {
  FakeRunner runner;
  json body = job_body("pass");
  std::string id = runner.submit(body);
  runner.wait(id);
  json file = json::parse(read_text(runner.job_dir(id) / "job.json"));
  EXPECT_EQ(file["id"], id);
  EXPECT_EQ(file["kind"], "benchmark");
  EXPECT_EQ(file["task"]["sha256"], bundled_task().sha256);
  EXPECT_EQ(file["task_dir"],
            (runner.cache() / "tasks" / bundled_task().sha256 / "fp16_gemm").string());
  EXPECT_EQ(read_text(file["candidate"].get<std::string>()), body["candidate"]["source"]);
  EXPECT_TRUE(std::filesystem::exists(runner.cache() / "candidates" /
                                      (body["candidate"]["sha256"].get<std::string>() + ".cu")));
  EXPECT_TRUE(file["seed"].is_number_unsigned());
  EXPECT_EQ(file["limits"]["job_seconds"], 600);
  // The same bundle again is served from the cache.
  std::string again = runner.submit(body);
  EXPECT_EQ(runner.wait(again)["result"]["status"], "passed");
  EXPECT_NE(json::parse(read_text(runner.job_dir(again) / "job.json"))["seed"], file["seed"]);
}

struct Interval {
  std::string job;
  int gpu = -1;
  long long start = 0, end = 0;
};

std::map<std::string, Interval> read_intervals(const std::filesystem::path& log) {
  std::map<std::string, Interval> out;
  std::istringstream lines(read_text(log));
  for (std::string what, job; lines >> what >> job;) {
    int gpu;
    long long when;
    lines >> gpu >> when;
    out[job].job = job;
    out[job].gpu = gpu;
    (what == "start" ? out[job].start : out[job].end) = when;
  }
  return out;
}

TEST(RunnerServer, RunsQueuedJobsInSubmissionOrderOnOneGpu) {
  TempDir dir;
  setenv("KILN_FAKE_WORKER_LOG", (dir / "log").c_str(), 1);
  FakeRunner runner({0});
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(runner.submit(job_body("sleep", "150", {"16x4096x4096"})));
  for (const auto& id : ids) EXPECT_EQ(runner.wait(id)["state"], "finished");
  unsetenv("KILN_FAKE_WORKER_LOG");
  auto intervals = read_intervals(dir / "log");
  ASSERT_EQ(intervals.size(), 3u);
  for (size_t i = 1; i < ids.size(); ++i) {
    EXPECT_LE(intervals[ids[i - 1]].end, intervals[ids[i]].start)
        << "job " << i << " started before job " << i - 1 << " ended";
  }
}

TEST(RunnerServer, RunsOneJobPerGpuWithTwoGpusAndThreeJobs) {
  TempDir dir;
  setenv("KILN_FAKE_WORKER_LOG", (dir / "log").c_str(), 1);
  FakeRunner runner({0, 1});
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i)
    ids.push_back(runner.submit(job_body("sleep", "300", {"16x4096x4096"})));
  for (const auto& id : ids) EXPECT_EQ(runner.wait(id)["state"], "finished");
  unsetenv("KILN_FAKE_WORKER_LOG");
  auto intervals = read_intervals(dir / "log");
  ASSERT_EQ(intervals.size(), 3u);
  std::set<int> gpus;
  for (const auto& [a_id, a] : intervals) {
    gpus.insert(a.gpu);
    for (const auto& [b_id, b] : intervals) {
      if (a_id == b_id || a.gpu != b.gpu) continue;
      EXPECT_TRUE(a.end <= b.start || b.end <= a.start)
          << a_id << " and " << b_id << " overlapped on GPU " << a.gpu;
    }
  }
  EXPECT_EQ(gpus, (std::set<int>{0, 1}));
  // The third job waited for one of the first two.
  const Interval& third = intervals[ids[2]];
  EXPECT_GE(third.start, std::min(intervals[ids[0]].end, intervals[ids[1]].end));
  EXPECT_LE(intervals[ids[0]].start, third.start);
  EXPECT_LE(intervals[ids[1]].start, third.start);
}

TEST(RunnerServer, FullQueueAnswers429) {
  FakeRunner runner({0}, [](RunnerOptions& o) { o.queue_limit = 1; });
  std::string running = runner.submit(job_body("hang"));
  std::string waiting = runner.submit(job_body("hang"));
  auto [status, reply] = runner.post(job_body("pass"));
  EXPECT_EQ(status, 429) << reply.dump();
  EXPECT_THAT(reply["error"].get<std::string>(), HasSubstr("queue is full"));
  EXPECT_EQ(runner.get("/v1/health")["queue"]["limit"], 1);
}

TEST(RunnerServer, OversizedRequestAnswers413) {
  FakeRunner runner({0}, [](RunnerOptions& o) { o.max_request_bytes = 64 * 1024; });
  json body = job_body("pass");
  body["candidate"]["source"] = std::string(100 * 1024, 'x');
  auto [status, reply] = runner.post(body);
  EXPECT_EQ(status, 413);
  EXPECT_EQ(runner.get("/v1/health")["queue"]["length"], 0);
}

TEST(RunnerServer, BadJobAnswers400NamingTheField) {
  FakeRunner runner;
  struct Case {
    std::function<void(json&)> change;
    std::string field;
  };
  std::vector<Case> cases = {
      {[](json& b) { b["kind"] = "race"; }, "kind"},
      {[](json& b) { b.erase("kind"); }, "kind"},
      {[](json& b) { b["candidate"]["sha256"] = "xyz"; }, "candidate.sha256"},
      {[](json& b) { b["candidate"].erase("source"); }, "candidate.source"},
      {[](json& b) { b["task"]["files"].erase("task.json"); }, "task.files"},
      {[](json& b) { b["task"]["files"]["../escape"] = "x"; }, "task.files.../escape"},
      {[](json& b) { b["task"]["name"] = "Bad Name"; }, "task.name"},
      {[](json& b) { b["workloads"] = {"1x1x1"}; }, "workloads[0]"},
      {[](json& b) {
         b["workloads"] = {"16x4096x4096", 7};
       },
       "workloads[1]"},
      {[](json& b) {
         b["limits"] = {{"job_seconds", -1}};
       },
       "limits.job_seconds"},
      {[](json& b) {
         b["limits"] = {{"min_samples", 50}, {"max_samples", 10}};
       },
       "limits.max_samples"},
      {[](json& b) { b["colour"] = "red"; }, "colour"},
      {[](json& b) {
         b["profile"] = {{"workload", "16x4096x4096"}};
       },
       "profile"},
      {[](json& b) { b["task"]["files"]["extra.txt"] = "x"; }, "task.files.extra.txt"},
      {[](json& b) {
         b["kind"] = "sanitize";
         b["sanitize"] = {{"workload", "1x1x1"}};
       },
       "sanitize.workload"},
      {[](json& b) {
         b["kind"] = "profile";
         b["profile"] = {{"workload", "1x1x1"}};
       },
       "profile.workload"},
  };
  for (const auto& c : cases) {
    json body = job_body("pass");
    c.change(body);
    auto [status, reply] = runner.post(body);
    EXPECT_EQ(status, 400) << c.field << ": " << reply.dump();
    EXPECT_EQ(reply.value("field", ""), c.field) << reply.dump();
    EXPECT_FALSE(reply.value("error", "").empty());
  }
  auto client = runner.http();
  auto not_json = client.Post("/v1/jobs", "{not json", "application/json");
  ASSERT_TRUE(not_json);
  EXPECT_EQ(not_json->status, 400);
  EXPECT_THAT(not_json->body, HasSubstr("not valid JSON"));
}

// Printing a value this deep (the reader quotes what it refuses) overflowed the stack.
TEST(RunnerServer, DeeplyNestedBodyAnswers400) {
  FakeRunner runner;
  auto client = runner.http();
  json deep = job_body("pass");
  deep["limits"] = {{"min_samples", "DEEP"}};
  std::string text = deep.dump();
  text.replace(text.find("\"DEEP\""), 6, std::string(300000, '[') + std::string(300000, ']'));
  auto nested = client.Post("/v1/jobs", text, "application/json");
  ASSERT_TRUE(nested);
  EXPECT_EQ(nested->status, 400);
  EXPECT_THAT(nested->body, HasSubstr("nests arrays and objects deeper than"));
}

TEST(RunnerServer, InvalidTaskBundleAnswers400) {
  FakeRunner runner;
  json body = job_body("pass");
  json task = json::parse(body["task"]["files"]["task.json"].get<std::string>());
  task["tolerance"] = "loose";
  body["task"]["files"]["task.json"] = task.dump();
  auto [status, reply] = runner.post(body);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(reply["field"], "task.files");
  EXPECT_THAT(reply["error"].get<std::string>(), HasSubstr("tolerance"));
}

TEST(RunnerServer, AnIncumbentTravelsToTheWorkerAndItsRatioIsChecked) {
  FakeRunner runner;
  json body = job_body("pass");
  const std::string incumbent = fake_source("pass", "incumbent");
  body["incumbent"] = {{"source", incumbent}, {"sha256", sha256_hex(incumbent)}};
  std::string id = runner.submit(body);
  json job = runner.wait(id);
  json file = json::parse(read_text(runner.job_dir(id) / "job.json"));
  EXPECT_EQ(read_text(file["incumbent"].get<std::string>()), incumbent);
  EXPECT_EQ(file["incumbent_sha256"], sha256_hex(incumbent));
  EXPECT_EQ(job["result"]["status"], "passed") << job.dump();
  EXPECT_EQ(job["result"]["incumbent"]["sha256"], sha256_hex(incumbent));
  EXPECT_DOUBLE_EQ(job["result"]["incumbent"]["speedup_geomean"].get<double>(), 1.05);

  // A worker whose rows' ratios disagree with their times is not believed.
  body = job_body("lie_incumbent");
  body["incumbent"] = {{"source", incumbent}, {"sha256", sha256_hex(incumbent)}};
  job = runner.wait(runner.submit(body));
  EXPECT_EQ(job["result"]["status"], "error");
  EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr("speedup_vs_incumbent"));

  // The incumbent's hash is checked as the candidate's is.
  body["incumbent"]["sha256"] = sha256_hex("something else");
  auto [status, reply] = runner.post(body);
  EXPECT_EQ(status, 409);
  EXPECT_EQ(reply["field"], "incumbent.sha256");
}

TEST(RunnerServer, Sha256MismatchAnswers409) {
  FakeRunner runner;
  json body = job_body("pass");
  body["candidate"]["sha256"] = sha256_hex("something else");
  auto [status, reply] = runner.post(body);
  EXPECT_EQ(status, 409);
  EXPECT_EQ(reply["field"], "candidate.sha256");

  body = job_body("pass");
  body["task"]["files"]["README.md"] =
      body["task"]["files"]["README.md"].get<std::string>() + "\nedited";
  std::tie(status, reply) = runner.post(body);
  EXPECT_EQ(status, 409);
  EXPECT_EQ(reply["field"], "task.sha256");
  EXPECT_THAT(reply["error"].get<std::string>(), HasSubstr("hash to"));
}

TEST(RunnerServer, TimeoutKillsTheWorkerAndNamesTheStage) {
  FakeRunner runner;
  json body = job_body("hang");
  body["limits"] = {{"job_seconds", 1}};
  std::string id = runner.submit(body);
  pid_t pid = runner.worker_pid(id);
  json job = runner.wait(id);
  EXPECT_EQ(job["state"], "finished");
  EXPECT_EQ(job["result"]["status"], "error");
  EXPECT_EQ(job["result"]["reason"], "timeout");
  EXPECT_EQ(job["result"]["stage"], "timing");
  EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr("timeout"));
  EXPECT_TRUE(eventually([&] { return process_gone(pid); }));
}

TEST(RunnerServer, JobSecondsAreCappedAtTheServersLimit) {
  FakeRunner runner({0}, [](RunnerOptions& o) { o.job_seconds = 1; });
  json body = job_body("hang");
  body["limits"] = {{"job_seconds", 3600}};
  std::string id = runner.submit(body);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(runner.wait(id)["result"]["reason"], "timeout");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

json finished_result(FakeRunner& runner, const std::string& mode,
                     const std::string& argument = "") {
  json job =
      runner.wait(runner.submit(job_body(mode, argument, {"16x4096x4096", "1024x4096x4096"})));
  EXPECT_EQ(job["state"], "finished") << mode;
  return job["result"];
}

TEST(RunnerServer, CrashIsAnErrorNamingTheSignal) {
  FakeRunner runner;
  json result = finished_result(runner, "crash");
  EXPECT_EQ(result["status"], "error");
  EXPECT_EQ(result["reason"], "crashed");
  EXPECT_EQ(result["stage"], "verify");
  EXPECT_THAT(result["error"].get<std::string>(), HasSubstr("SIGSEGV"));
  EXPECT_THAT(result["error"].get<std::string>(), HasSubstr("signal 11"));
  EXPECT_THAT(result.value("log_tail", ""), HasSubstr("mode crash"));
}

TEST(RunnerServer, GarbageOnStdoutIsAnError) {
  FakeRunner runner;
  json result = finished_result(runner, "garbage");
  EXPECT_EQ(result["status"], "error");
  EXPECT_EQ(result["reason"], "bad_output");
  EXPECT_THAT(result["error"].get<std::string>(), HasSubstr("not a JSON event"));
}

TEST(RunnerServer, ExitWithoutAResultIsAnError) {
  FakeRunner runner;
  json result = finished_result(runner, "no_result");
  EXPECT_EQ(result["reason"], "no_result");
  EXPECT_EQ(result["stage"], "timing");
  result = finished_result(runner, "exit_code", "3");
  EXPECT_EQ(result["reason"], "exit_code");
  EXPECT_THAT(result["error"].get<std::string>(), HasSubstr("exit code 3"));
}

TEST(RunnerServer, OutputAfterTheResultIsAnError) {
  FakeRunner runner;
  EXPECT_EQ(finished_result(runner, "after_result")["reason"], "bad_output");
}

TEST(RunnerServer, LyingResultsAreRejected) {
  FakeRunner runner;
  for (const char* mode : {"lie_task", "lie_numbers", "lie_status"}) {
    json result = finished_result(runner, mode);
    EXPECT_EQ(result["status"], "error") << mode;
    EXPECT_EQ(result["reason"], "invalid_result") << mode << ": " << result.dump();
    EXPECT_FALSE(result.contains("workloads"))
        << "numbers of a lying worker must not reach clients";
  }
}

TEST(RunnerServer, WorkerResultsForFailuresPassThrough) {
  FakeRunner runner;
  json failed = finished_result(runner, "fail");
  EXPECT_EQ(failed["status"], "failed") << failed.dump();
  EXPECT_EQ(failed["workloads"][0]["passed"], false);
  json build = finished_result(runner, "build_error");
  EXPECT_EQ(build["status"], "error");
  EXPECT_EQ(build["stage"], "build");
  EXPECT_FALSE(build.contains("reason"));
}

TEST(RunnerServer, CancelKillsTheWorkerAndItsChildren) {
  FakeRunner runner;
  std::string id = runner.submit(job_body("spawn_child"));
  pid_t worker = runner.worker_pid(id);
  pid_t child = runner.worker_pid(id, "fake_child.pid");
  ASSERT_GT(worker, 0);
  ASSERT_GT(child, 0);
  auto client = runner.http();
  auto reply = client.Delete(("/v1/jobs/" + id).c_str());
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 200);
  json body = json::parse(reply->body);
  EXPECT_EQ(body["state"], "cancelled");
  EXPECT_EQ(body["result"]["reason"], "cancelled");
  EXPECT_TRUE(process_gone(worker)) << "the worker outlived its cancel";
  EXPECT_TRUE(eventually([&] { return process_gone(child); }))
      << "the worker's child outlived the cancel";
  EXPECT_EQ(runner.get("/v1/health")["jobs_running"], 0);
}

TEST(RunnerServer, CancelOfAQueuedJobIsImmediate) {
  FakeRunner runner;
  std::string running = runner.submit(job_body("hang"));
  std::string queued = runner.submit(job_body("pass"));
  EXPECT_TRUE(eventually([&] { return runner.get("/v1/jobs/" + running)["state"] == "running"; }));
  EXPECT_EQ(runner.get("/v1/jobs/" + queued)["position"], 0);
  auto client = runner.http();
  auto reply = client.Delete(("/v1/jobs/" + queued).c_str());
  ASSERT_TRUE(reply);
  EXPECT_EQ(json::parse(reply->body)["state"], "cancelled");
  EXPECT_FALSE(std::filesystem::exists(runner.job_dir(queued) / "fake_worker.pid"));
  client.Delete(("/v1/jobs/" + running).c_str());
  EXPECT_EQ(runner.get("/v1/jobs/" + running)["state"], "cancelled");
}

TEST(RunnerServer, LongPollReturnsAsSoonAsTheJobEnds) {
  FakeRunner runner;
  std::string id = runner.submit(job_body("sleep", "300", {"16x4096x4096"}));
  auto start = std::chrono::steady_clock::now();
  json job = runner.wait(id, 30);
  EXPECT_EQ(job["state"], "finished");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(RunnerServer, LongPollAnswersAtItsWaitWhileTheJobRuns) {
  FakeRunner runner;
  std::string id = runner.submit(job_body("hang"));
  auto start = std::chrono::steady_clock::now();
  json job = runner.get("/v1/jobs/" + id + "?wait=0.5");
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_THAT(job["state"].get<std::string>(),
              ::testing::AnyOf(std::string("queued"), std::string("running")));
  EXPECT_GE(elapsed, 400ms);
  EXPECT_LT(elapsed, 5s);
  EXPECT_FALSE(job.contains("result"));
  auto bad = runner.http().Get(("/v1/jobs/" + id + "?wait=soon").c_str());
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
}

TEST(RunnerServer, EventsArePagedInOrder) {
  FakeRunner runner;
  std::string id = runner.submit(job_body("events", "1200", {"16x4096x4096"}));
  runner.wait(id);
  std::vector<json> events;
  int64_t after = 0;
  bool saw_more = false;
  for (int page = 0; page < 20; ++page) {
    json reply = runner.get("/v1/jobs/" + id + "/events?after=" + std::to_string(after));
    for (auto& event : reply["events"]) events.push_back(event);
    after = reply["next"];
    saw_more = saw_more || reply["more"].get<bool>();
    if (!reply["more"].get<bool>()) break;
  }
  EXPECT_TRUE(saw_more);
  for (size_t i = 0; i < events.size(); ++i)
    ASSERT_EQ(events[i]["seq"], static_cast<int64_t>(i + 1));
  size_t progress = std::count_if(events.begin(), events.end(),
                                  [](const json& e) { return e["event"] == "progress"; });
  EXPECT_EQ(progress, 1201u);  // 1200 from "events", one per workload
  EXPECT_EQ(events.front()["state"], "queued");
  EXPECT_EQ(events.back()["event"], "state");
  EXPECT_EQ(events.back()["state"], "finished");
  EXPECT_EQ(events.back()["status"], "passed");
  json tail = runner.get("/v1/jobs/" + id + "/events?after=" + std::to_string(events.size()));
  EXPECT_TRUE(tail["events"].empty());
  EXPECT_EQ(tail["state"], "finished");
}

TEST(RunnerServer, EventsLongPollWaitsForTheNextEvent) {
  FakeRunner runner;
  std::string id = runner.submit(job_body("sleep", "400", {"16x4096x4096"}));
  json first = runner.get("/v1/jobs/" + id + "/events?after=0&wait=10");
  ASSERT_FALSE(first["events"].empty());
  int64_t after = first["next"];
  auto start = std::chrono::steady_clock::now();
  json next = runner.get("/v1/jobs/" + id + "/events?after=" + std::to_string(after) + "&wait=10");
  EXPECT_FALSE(next["events"].empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(RunnerServer, UnknownJobsAndPathsAnswer404) {
  FakeRunner runner;
  auto client = runner.http();
  for (const char* path : {"/v1/jobs/j-nope", "/v1/jobs/j-nope/events", "/v2/jobs"}) {
    auto reply = client.Get(path);
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->status, 404) << path;
    EXPECT_TRUE(json::parse(reply->body, nullptr, false).contains("error")) << path;
  }
  auto reply = client.Delete("/v1/jobs/j-nope");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 404);
}

TEST(RunnerServer, HealthReportsGpusAndQueue) {
  FakeRunner runner({2, 5});
  json health = runner.get("/v1/health");
  ASSERT_EQ(health["gpus"].size(), 2u);
  EXPECT_EQ(health["gpus"][0]["index"], 2);
  EXPECT_EQ(health["gpus"][1]["index"], 5);
  EXPECT_EQ(health["gpus"][0]["busy"], false);
  EXPECT_TRUE(health["gpus"][0]["job"].is_null());
  EXPECT_EQ(health["queue"]["length"], 0);
  EXPECT_EQ(health["queue"]["limit"], 16);
  EXPECT_EQ(health["jobs_running"], 0);
  EXPECT_TRUE(health["version"].is_string());
  std::string id = runner.submit(job_body("hang"));
  EXPECT_TRUE(eventually([&] { return runner.get("/v1/health")["jobs_running"] == 1; }));
  json busy = runner.get("/v1/health");
  bool found = false;
  for (const auto& gpu : busy["gpus"]) found = found || gpu["job"] == id;
  EXPECT_TRUE(found) << busy.dump();
}

TEST(RunnerServer, RefusesANonLoopbackBindWithoutAToken) {
  TempDir cache;
  RunnerOptions options;
  options.host = "0.0.0.0";
  options.port = 0;
  options.gpus = {0};
  options.cache_dir = cache.path();
  options.worker = KILN_FAKE_WORKER;
  options.discover_gpu_names = false;
  RunnerServer server(options);
  auto bound = server.bind();
  ASSERT_FALSE(bound.ok());
  EXPECT_THAT(bound.error().message, HasSubstr("--token-file"));
}

TEST(RunnerServer, RefusesToStartWithoutAWorker) {
  TempDir cache;
  RunnerOptions options;
  options.port = 0;
  options.gpus = {0};
  options.cache_dir = cache.path();
  options.worker = cache / "no-such-worker";
  RunnerServer server(options);
  auto bound = server.bind();
  ASSERT_FALSE(bound.ok());
  EXPECT_THAT(bound.error().message, HasSubstr("--worker"));
}

TEST(RunnerServer, WrongOrMissingTokenAnswers401) {
  FakeRunner runner({0}, [](RunnerOptions& o) { o.token = "0123456789abcdef-secret"; });
  httplib::Client anonymous("127.0.0.1", runner.port());
  auto reply = anonymous.Get("/v1/health");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 401);
  httplib::Client wrong("127.0.0.1", runner.port());
  wrong.set_bearer_token_auth("0123456789abcdef-guess");
  reply = wrong.Post("/v1/jobs", job_body("pass").dump(), "application/json");
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 401);
  EXPECT_EQ(runner.get("/v1/health")["gpus"].size(), 1u);  // with the token
}

TEST(RunnerServer, RefusesAForeignHostHeaderOnLoopback) {
  FakeRunner runner;
  auto client = runner.http();
  auto reply = client.Get("/v1/health", {{"Host", "evil.example:8000"}});
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 403);
}

// Sends raw bytes and returns what came back (possibly nothing).
std::string raw_exchange(int port, const std::string& bytes, int timeout_ms = 500) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return "";
  }
  timeval timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ssize_t sent = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  (void)sent;
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = recv(fd, buffer, sizeof buffer, 0)) > 0;)
    out.append(buffer, static_cast<size_t>(n));
  close(fd);
  return out;
}

TEST(RunnerServer, SurvivesMalformedHttp) {
  FakeRunner runner;
  EXPECT_THAT(raw_exchange(runner.port(), "GARBAGE\r\n\r\n"), HasSubstr("400"));
  raw_exchange(runner.port(), std::string(70000, 'A'));
  raw_exchange(
      runner.port(),
      "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 999999999999\r\n\r\n{");
  raw_exchange(
      runner.port(),
      "POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{\"kind\":");
  raw_exchange(runner.port(), "GET /v1/jobs/%ZZ%00?wait=%%% HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  std::string answer =
      raw_exchange(runner.port(),
                   "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", 5000);
  EXPECT_THAT(answer, HasSubstr("200"));
  EXPECT_EQ(runner.wait(runner.submit(job_body("pass", "", {"16x4096x4096"})))["result"]["status"],
            "passed");
}

TEST(RunnerServer, StopCancelsRunningJobsAndKillsWorkers) {
  auto runner = std::make_unique<FakeRunner>();
  std::string id = runner->submit(job_body("hang"));
  pid_t pid = runner->worker_pid(id);
  ASSERT_GT(pid, 0);
  runner->stop();
  EXPECT_TRUE(process_gone(pid));
}

}  // namespace
}  // namespace kiln::runner
