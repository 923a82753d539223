// `kiln runner --slurm`'s jobs on the CPU: the HTTP API over a scripted Slurm whose sbatch
// runs the batch script at once with the fake worker. Each way Slurm ends a job becomes a
// RESULT naming it; the queue deadline, slurmctld's silence and a cancel end the job without
// a hang; the worker's own RESULT passes the same check as a local job's.
#include "kiln/runner/slurm_execution.h"

#include <gmock/gmock.h>

#include "runner_fixture.h"
#include "slurm_fake.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;
using ::testing::HasSubstr;

struct SlurmRunner {
  explicit SlurmRunner(std::function<void(ScriptedSlurm&, SlurmExecutorOptions&)> setup = {}) {
    SlurmExecutorOptions options;
    options.job.gres = "none";
    options.poll = std::chrono::milliseconds(20);
    options.queue_seconds = 30;
    options.controller_grace_seconds = 30;
    if (setup) setup(slurm, options);
    runner = std::make_unique<FakeRunner>(std::vector<int>{}, [&](RunnerOptions& runner_options) {
      runner_options.slurm = options;
      runner_options.slurm_slots = 2;
      runner_options.slurm_commands = &slurm;
    });
  }
  json run(const std::string& mode, const std::string& argument = "") {
    return runner->wait(runner->submit(job_body(mode, argument)));
  }
  ScriptedSlurm slurm;
  std::unique_ptr<FakeRunner> runner;
};

TEST(SlurmExecution, CompletedJobReturnsTheWorkersCheckedResult) {
  SlurmRunner cluster([](ScriptedSlurm& slurm, SlurmExecutorOptions&) {
    slurm.states = {"PENDING", "RUNNING", "COMPLETED"};
  });
  json job = cluster.run("pass");
  EXPECT_EQ(job["state"], "finished");
  EXPECT_EQ(job["result"]["status"], "passed") << job.dump();
  EXPECT_EQ(job["result"]["task"]["sha256"], bundled_task().sha256);
  EXPECT_TRUE(std::filesystem::exists(cluster.runner->job_dir(job["id"]) / "slurm_job.sh"));
  json events = cluster.runner->get("/v1/jobs/" + job["id"].get<std::string>() + "/events");
  EXPECT_THAT(events.dump(), HasSubstr("Slurm job 4242 submitted"));
  EXPECT_THAT(events.dump(), HasSubstr("\"stage\""));
}

TEST(SlurmExecution, LyingWorkerIsRejectedByTheSameResultCheck) {
  SlurmRunner cluster;
  json job = cluster.run("lie_task");
  EXPECT_EQ(job["result"]["status"], "error");
  EXPECT_EQ(job["result"]["reason"], "invalid_result") << job.dump();
}

TEST(SlurmExecution, WorkerExitCodeIsReported) {
  SlurmRunner cluster(
      [](ScriptedSlurm& slurm, SlurmExecutorOptions&) { slurm.states = {"FAILED"}; });
  json job = cluster.run("exit_code", "3");
  EXPECT_EQ(job["result"]["reason"], "exit_code") << job.dump();
  EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr("exit code 3"));
}

struct EndCase {
  std::string state;
  std::string reason;
  std::string words;
};

TEST(SlurmExecution, EachWaySlurmEndsAJobIsNamedInTheResult) {
  const std::vector<EndCase> cases{{"TIMEOUT", "timeout", "Slurm's time limit"},
                                   {"CANCELLED by 0", "cancelled", "cancelled by Slurm"},
                                   {"PREEMPTED", "scheduler", "preempted"},
                                   {"NODE_FAIL", "scheduler", "node failure"},
                                   {"OUT_OF_MEMORY", "scheduler", "out of memory"},
                                   {"BOOT_FAIL", "scheduler", "BOOT_FAIL"}};
  for (const auto& end : cases) {
    SlurmRunner cluster([&](ScriptedSlurm& slurm, SlurmExecutorOptions&) {
      slurm.run_script = false;
      slurm.states = {"RUNNING", end.state};
    });
    json job = cluster.run("pass");
    EXPECT_EQ(job["result"]["status"], "error") << end.state;
    EXPECT_EQ(job["result"]["reason"], end.reason) << end.state << job.dump();
    EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr(end.words)) << end.state;
    EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr("4242")) << end.state;
  }
}

TEST(SlurmExecution, UnknownPartitionIsAnErrorResultQuotingSbatch) {
  SlurmRunner cluster([](ScriptedSlurm& slurm, SlurmExecutorOptions& options) {
    options.job.partition = "nope";
    slurm.sbatch_error =
        "sbatch: error: Batch job submission failed: Invalid partition name specified\n";
  });
  json job = cluster.run("pass");
  EXPECT_EQ(job["result"]["reason"], "scheduler");
  EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr("Invalid partition name"));
  EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr("--partition"));
}

TEST(SlurmExecution, QueueWaitPastTheDeadlineIsCancelledAndAnswered) {
  SlurmRunner cluster([](ScriptedSlurm& slurm, SlurmExecutorOptions& options) {
    slurm.run_script = false;
    slurm.states = {"PENDING"};
    options.queue_seconds = 0.3;
  });
  json job = cluster.run("pass");
  EXPECT_EQ(job["result"]["reason"], "scheduler") << job.dump();
  EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr("queue wait"));
  EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr("--queue-seconds"));
  auto calls = cluster.slurm.calls();
  EXPECT_TRUE(std::any_of(calls.begin(), calls.end(), [](const auto& call) {
    return call == std::vector<std::string>{"scancel", "4242"};
  }));
}

TEST(SlurmExecution, SlurmctldSilentPastItsGraceEndsTheJob) {
  SlurmRunner cluster([](ScriptedSlurm& slurm, SlurmExecutorOptions& options) {
    slurm.run_script = false;
    slurm.states = {"RUNNING"};
    options.controller_grace_seconds = 0.3;
  });
  std::string id = cluster.runner->submit(job_body("pass"));
  ASSERT_TRUE(eventually([&] { return cluster.slurm.called("squeue"); }));
  cluster.slurm.controller_down = true;  // slurmctld goes away mid-job
  json job = cluster.runner->wait(id);
  ASSERT_EQ(job["state"], "finished") << job.dump();
  EXPECT_EQ(job["result"]["reason"], "scheduler") << job.dump();
  EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr("Slurm stopped answering"));
  EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr("send it again"));
}

TEST(SlurmExecution, SlurmctldDownFromTheStartIsAnErrorNotAHang) {
  SlurmRunner cluster(
      [](ScriptedSlurm& slurm, SlurmExecutorOptions&) { slurm.controller_down = true; });
  json job = cluster.run("pass");
  EXPECT_EQ(job["result"]["reason"], "scheduler") << job.dump();
  EXPECT_THAT(job["result"]["error"].get<std::string>(), HasSubstr("Slurm refused the job"));
}

TEST(SlurmExecution, CancelScancelsTheSlurmJob) {
  SlurmRunner cluster([](ScriptedSlurm& slurm, SlurmExecutorOptions&) {
    slurm.run_script = false;
    slurm.states = {"RUNNING"};
  });
  std::string id = cluster.runner->submit(job_body("pass"));
  ASSERT_TRUE(eventually([&] { return cluster.slurm.called("squeue"); }));
  auto client = cluster.runner->http();
  auto reply = client.Delete(("/v1/jobs/" + id).c_str());
  ASSERT_TRUE(reply);
  json job = cluster.runner->wait(id);
  EXPECT_EQ(job["state"], "cancelled") << job.dump();
  EXPECT_TRUE(cluster.slurm.called("scancel"));
}

TEST(SlurmExecution, JobsInFlightShareOneSqueuePerPoll) {
  SlurmRunner cluster([](ScriptedSlurm& slurm, SlurmExecutorOptions&) {
    slurm.run_script = false;
    slurm.states = {"RUNNING"};
  });
  std::string first = cluster.runner->submit(job_body("pass"));
  std::string second = cluster.runner->submit(job_body("pass"));
  // Both slots hold a Slurm job; from then on every poll asks for both at once.
  ASSERT_TRUE(eventually([&] {
    auto lists = cluster.slurm.squeue_job_lists();
    return std::count(lists.begin(), lists.end(), "4242,4243") >= 3;
  }));
  auto lists = cluster.slurm.squeue_job_lists();
  auto both = std::find(lists.begin(), lists.end(), "4242,4243");
  EXPECT_TRUE(std::all_of(both, lists.end(), [](const std::string& list) {
    return list == "4242,4243";
  })) << ::testing::PrintToString(lists);
  auto client = cluster.runner->http();
  for (const auto& id : {first, second}) ASSERT_TRUE(client.Delete(("/v1/jobs/" + id).c_str()));
  EXPECT_EQ(cluster.runner->wait(first)["state"], "cancelled");
  EXPECT_EQ(cluster.runner->wait(second)["state"], "cancelled");
}

TEST(SlurmExecution, HealthReportsThePartitionsGpusJobsAndWait) {
  SlurmRunner cluster(
      [](ScriptedSlurm&, SlurmExecutorOptions& options) { options.job.partition = "h200"; });
  json health = cluster.runner->get("/v1/health");
  EXPECT_EQ(health["backend"], "slurm");
  EXPECT_EQ(health["slurm"]["partition"], "h200");
  EXPECT_EQ(health["slurm"]["gpus"], 4);
  EXPECT_EQ(health["slurm"]["nodes"], 2);
  EXPECT_EQ(health["slurm"]["jobs_pending"], 2);
  EXPECT_EQ(health["slurm"]["jobs_running"], 1);
  EXPECT_TRUE(health["slurm"].contains("expected_wait_s"));
  EXPECT_EQ(health["gpus"].size(), 2u);  // the runner's slots
}

TEST(SlurmExecution, HealthWithSlurmctldDownSaysSo) {
  SlurmRunner cluster(
      [](ScriptedSlurm& slurm, SlurmExecutorOptions&) { slurm.controller_down = true; });
  json health = cluster.runner->get("/v1/health");
  EXPECT_THAT(health["slurm"]["error"].get<std::string>(), HasSubstr("scontrol ping"));
}

}  // namespace
}  // namespace kiln::runner
