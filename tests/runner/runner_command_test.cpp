// `kiln runner` from the outside: it refuses what it must at start-up, serves a job
// through the fake worker, and stops cleanly on SIGTERM.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>

#include "kiln/base/file.h"
#include "kiln/runner/runner_client.h"
#include "kiln_process.h"
#include "runner_fixture.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;
using ::testing::HasSubstr;

TEST(RunnerCommand, RefusesANonLoopbackListenWithoutAToken) {
  TempDir cache;
  KilnProcess kiln({"runner", "--gpus", "0", "--listen", "0.0.0.0:0", "--worker", KILN_FAKE_WORKER,
                    "--cache-dir", cache.path().string()});
  EXPECT_EQ(kiln.wait_exit(), 1);
  EXPECT_THAT(kiln.err(), HasSubstr("without a bearer token"));
}

TEST(RunnerCommand, RefusesAMissingWorkerAndBadArguments) {
  TempDir cache;
  KilnProcess missing({"runner", "--gpus", "0", "--listen", "127.0.0.1:0", "--worker",
                       "/no/kiln-worker", "--cache-dir", cache.path().string()});
  EXPECT_EQ(missing.wait_exit(), 1);
  EXPECT_THAT(missing.err(), HasSubstr("no worker at /no/kiln-worker"));
  KilnProcess gpus({"runner", "--gpus", "0,x", "--worker", KILN_FAKE_WORKER});
  EXPECT_EQ(gpus.wait_exit(), 2);
  EXPECT_THAT(gpus.err(), HasSubstr("not a GPU index"));
  KilnProcess listen(
      {"runner", "--gpus", "0", "--listen", "nowhere", "--worker", KILN_FAKE_WORKER});
  EXPECT_EQ(listen.wait_exit(), 2);
  EXPECT_THAT(listen.err(), HasSubstr("--listen"));
}

TEST(RunnerCommand, ServesJobsAndStopsOnSigterm) {
  TempDir cache;
  ASSERT_TRUE(write_file(cache / "token", "a-token-of-twenty-chars\n").ok());
  KilnProcess kiln({"runner", "--gpus", "0,1", "--listen", "127.0.0.1:0", "--token-file",
                    (cache / "token").string(), "--worker", KILN_FAKE_WORKER, "--cache-dir",
                    (cache / "cache").string(), "--queue-limit", "4"});
  std::string url =
      kiln.wait_for(std::regex("runner listening on (http://127\\.0\\.0\\.1:[0-9]+)"));
  ASSERT_FALSE(url.empty()) << kiln.err();
  RunnerClient client({url, "a-token-of-twenty-chars"});
  auto health = client.health();
  ASSERT_TRUE(health.ok()) << health.error().message;
  EXPECT_EQ((*health)["gpus"].size(), 2u);
  EXPECT_EQ((*health)["queue"]["limit"], 4);
  auto outcome = client.run(job_body("pass", "", {"16x4096x4096"}), {});
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_EQ(outcome->result["status"], "passed");
  // Structured logs name the job and its stages.
  EXPECT_FALSE(kiln.wait_for(std::regex("job " + outcome->job_id + " stage done")).empty())
      << kiln.err();
  std::string running = client.submit(job_body("hang")).value().id;
  pid_t worker = 0;
  eventually([&] {
    std::string text = read_text(cache / "cache" / "jobs" / running / "fake_worker.pid");
    worker = text.empty() ? 0 : std::stoi(text);
    return worker > 0;
  });
  kill(kiln.pid(), SIGTERM);
  EXPECT_EQ(kiln.wait_exit(), 0) << kiln.err();
  EXPECT_TRUE(worker > 0 && process_gone(worker));
}

}  // namespace
}  // namespace kiln::runner
