// Slurm's answers, parsed: every job state, sbatch's refusals, squeue forgetting a job,
// slurmctld down, the partition for /v1/health; and the real tools' runner over fake
// sbatch/squeue/scancel scripts first on PATH.
#include "kiln/runner/slurm_backend.h"

#include <gmock/gmock.h>
#include <stdlib.h>

#include <fstream>

#include "slurm_fake.h"
#include "support/temp_dir.h"

namespace kiln::runner {
namespace {

using ::testing::HasSubstr;
using testing::ScriptedSlurm;

TEST(SlurmBackend, ParsesEveryJobState) {
  const std::vector<std::pair<std::string, SlurmState>> cases{
      {"PENDING", SlurmState::kPending},     {"RUNNING", SlurmState::kRunning},
      {"COMPLETING", SlurmState::kRunning},  {"CONFIGURING", SlurmState::kRunning},
      {"COMPLETED", SlurmState::kCompleted}, {"FAILED", SlurmState::kFailed},
      {"CANCELLED", SlurmState::kCancelled}, {"CANCELLED by 1000", SlurmState::kCancelled},
      {"TIMEOUT", SlurmState::kTimeout},     {"NODE_FAIL", SlurmState::kNodeFail},
      {"PREEMPTED", SlurmState::kPreempted}, {"OUT_OF_MEMORY", SlurmState::kOutOfMemory},
      {"OUT_OF_ME+", SlurmState::kOther},    {"BOOT_FAIL", SlurmState::kOther}};
  for (const auto& [word, state] : cases) {
    SlurmJobStatus status = parse_slurm_state(word);
    EXPECT_EQ(status.state, state) << word;
  }
  EXPECT_EQ(parse_slurm_state("CANCELLED by 0").name, "CANCELLED");
  EXPECT_FALSE(is_ended(SlurmState::kPending));
  EXPECT_FALSE(is_ended(SlurmState::kRunning));
  EXPECT_TRUE(is_ended(SlurmState::kNodeFail));
}

TEST(SlurmBackend, SubmitReturnsTheParsableJobId) {
  ScriptedSlurm slurm;
  slurm.run_script = false;
  SlurmBackend backend(slurm, "h200");
  auto id = backend.submit("/jobs/j-1/slurm_job.sh");
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, "4242");
  EXPECT_EQ(slurm.calls().at(0),
            (std::vector<std::string>{"sbatch", "--parsable", "/jobs/j-1/slurm_job.sh"}));
}

TEST(SlurmBackend, UnknownPartitionIsSbatchsErrorWithAdvice) {
  ScriptedSlurm slurm;
  slurm.sbatch_error =
      "sbatch: error: invalid partition specified: nope\n"
      "sbatch: error: Batch job submission failed: Invalid partition name specified\n";
  SlurmBackend backend(slurm, "nope");
  auto id = backend.submit("/x.sh");
  ASSERT_FALSE(id);
  EXPECT_THAT(id.error().message, HasSubstr("Invalid partition name specified"));
  EXPECT_THAT(id.error().message, HasSubstr("check --partition"));
}

TEST(SlurmBackend, StatusReadsSqueueWithThePendingReason) {
  ScriptedSlurm slurm;
  slurm.states = {"PENDING"};
  SlurmBackend backend(slurm, "");
  auto status = backend.status("4242");
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(status->state, SlurmState::kPending);
  EXPECT_EQ(status->reason, "None");
}

TEST(SlurmBackend, StatusFallsBackToSacctOnceSqueueForgetsTheJob) {
  ScriptedSlurm slurm;
  slurm.squeue_forgets = true;
  slurm.states = {"TIMEOUT"};
  SlurmBackend backend(slurm, "");
  auto status = backend.status("4242");
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(status->state, SlurmState::kTimeout);
  EXPECT_TRUE(slurm.called("sacct"));
}

TEST(SlurmBackend, StatusesAskOneSqueueForEveryJobAndOneSacctForTheForgotten) {
  // squeue holds 1 and 2; 3 ended long ago (only sacct knows it); 4 is known to neither.
  struct Cluster : SlurmCommandRunner {
    std::vector<std::vector<std::string>> calls;
    SlurmCommandResult run(const std::vector<std::string>& argv, std::chrono::seconds) override {
      calls.push_back(argv);
      SlurmCommandResult result;
      result.ran = true;
      if (argv[0] == "squeue") result.out = "1|RUNNING|None\n2|PENDING|Resources\n";
      if (argv[0] == "sacct") result.out = "3|CANCELLED by 0\n";
      return result;
    }
  } slurm;
  SlurmBackend backend(slurm, "");
  auto statuses = backend.statuses({"1", "2", "3", "4"});
  ASSERT_EQ(slurm.calls.size(), 2u);
  EXPECT_EQ(slurm.calls[0], (std::vector<std::string>{"squeue", "-h", "--states=all", "-j",
                                                      "1,2,3,4", "-o", "%i|%T|%r"}));
  EXPECT_EQ(slurm.calls[1], (std::vector<std::string>{"sacct", "-n", "-X", "-P", "-j", "3,4", "-o",
                                                      "JobID,State"}));
  ASSERT_EQ(statuses.size(), 4u);
  ASSERT_TRUE(statuses.at("1"));
  EXPECT_EQ(statuses.at("1")->state, SlurmState::kRunning);
  ASSERT_TRUE(statuses.at("2"));
  EXPECT_EQ(statuses.at("2")->state, SlurmState::kPending);
  EXPECT_EQ(statuses.at("2")->reason, "Resources");
  ASSERT_TRUE(statuses.at("3"));
  EXPECT_EQ(statuses.at("3")->state, SlurmState::kCancelled);
  ASSERT_FALSE(statuses.at("4"));
  EXPECT_THAT(statuses.at("4").error().message, HasSubstr("Slurm knows no job 4"));
}

TEST(SlurmBackend, OneUnknownJobIsNotASlurmctldFailure) {
  // squeue -j with a single id it does not know exits 1; that is an answer, not a dead
  // controller.
  struct Cluster : SlurmCommandRunner {
    SlurmCommandResult run(const std::vector<std::string>& argv, std::chrono::seconds) override {
      SlurmCommandResult result;
      result.ran = true;
      result.exit_code = 1;
      result.err = argv[0] == "squeue" ? "slurm_load_jobs error: Invalid job id specified\n"
                                       : "Slurm accounting storage is disabled\n";
      return result;
    }
  } slurm;
  SlurmBackend backend(slurm, "");
  auto status = backend.status("9");
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message, HasSubstr("Slurm knows no job 9"));
  EXPECT_THAT(status.error().message, HasSubstr("accounting storage is disabled"));
}

TEST(SlurmBackend, ControllerDownIsAnErrorThatSaysToCheckSlurmctld) {
  ScriptedSlurm slurm;
  slurm.controller_down = true;
  SlurmBackend backend(slurm, "");
  auto status = backend.status("4242");
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message, HasSubstr("Unable to contact slurm controller"));
  EXPECT_THAT(status.error().message, HasSubstr("scontrol ping"));
  EXPECT_FALSE(backend.cluster());
}

TEST(SlurmBackend, ClusterCountsGpusNodesAndJobsOfThePartition) {
  ScriptedSlurm slurm;
  SlurmBackend backend(slurm, "h200");
  auto cluster = backend.cluster();
  ASSERT_TRUE(cluster) << cluster.error().message;
  EXPECT_EQ(cluster->nodes, 2);
  EXPECT_EQ(cluster->idle_nodes, 2);
  EXPECT_EQ(cluster->gpus, 4);
  EXPECT_EQ(cluster->jobs_pending, 2);
  EXPECT_EQ(cluster->jobs_running, 1);
  auto calls = slurm.calls();
  EXPECT_EQ(calls.at(0),
            (std::vector<std::string>{"sinfo", "-p", "h200", "-h", "-N", "-o", "%N|%T|%G"}));
}

TEST(SlurmBackend, ClusterParseReadsGresForms) {
  auto cluster = parse_slurm_cluster(
      "a|allocated|gpu:8\nb|idle|gpu:a100:4(S:0-1),shard:8\nc|down*|(null)\n", "");
  EXPECT_EQ(cluster.nodes, 3);
  EXPECT_EQ(cluster.idle_nodes, 1);
  EXPECT_EQ(cluster.gpus, 12);
  EXPECT_EQ(cluster.jobs_pending, 0);
}

// The real runner, over fake tools: a temp dir of tiny scripts put first on PATH.
TEST(SlurmBackend, RealCommandRunnerCallsTheToolsOnPath) {
  kiln::testing::TempDir dir;
  auto tool = [&](const std::string& name, const std::string& body) {
    std::ofstream(dir.path() / name) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(dir.path() / name, std::filesystem::perms::owner_all);
  };
  tool("sbatch", "echo \"$@\" > " + (dir.path() / "sbatch.args").string() + "; echo '77;c1'");
  tool("squeue", "echo '77|RUNNING|None'");
  tool("scancel", "echo 'scancel: error: Invalid job id specified' >&2; exit 1");
  const std::string old_path = getenv("PATH") ? getenv("PATH") : "";
  setenv("PATH", (dir.path().string() + ":" + old_path).c_str(), 1);
  ProcessSlurmCommandRunner commands;
  SlurmBackend backend(commands, "");
  auto id = backend.submit("/x.sh");
  auto status = backend.status("77");
  auto cancelled = backend.cancel("78");
  setenv("PATH", old_path.c_str(), 1);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, "77");
  ASSERT_TRUE(status) << status.error().message;
  EXPECT_EQ(status->state, SlurmState::kRunning);
  ASSERT_FALSE(cancelled);
  EXPECT_THAT(cancelled.error().message, HasSubstr("Invalid job id specified"));
}

TEST(SlurmBackend, MissingToolIsASpawnErrorNamingThePackage) {
  ProcessSlurmCommandRunner commands;
  auto ran = commands.run({"/nonexistent/sbatch"}, std::chrono::seconds(5));
  EXPECT_FALSE(ran.ran);
  EXPECT_THAT(ran.error, HasSubstr("slurm-client"));
}

}  // namespace
}  // namespace kiln::runner
