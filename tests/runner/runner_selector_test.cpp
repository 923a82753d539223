// Runner selection: KILN_RUNNER and the runner_urls setting, least loaded first, and a
// local GPU (here the fake worker) before any of them.
#include "kiln/runner/runner_selector.h"

#include <gmock/gmock.h>

#include "runner_fixture.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;
using ::testing::HasSubstr;

class RunnerSelectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    unsetenv("KILN_RUNNER");
    unsetenv("KILN_RUNNER_TOKEN");
  }
  void TearDown() override { SetUp(); }
};

TEST_F(RunnerSelectorTest, PicksTheRunnerWithTheShorterQueue) {
  FakeRunner busy({0});
  FakeRunner idle({0});
  busy.submit(job_body("hang"));
  busy.submit(job_body("hang"));
  busy.submit(job_body("hang"));
  ASSERT_TRUE(eventually([&] { return busy.get("/v1/health")["queue"]["length"] == 2; }));
  for (const auto& order : {busy.url() + "," + idle.url(), idle.url() + ", " + busy.url()}) {
    setenv("KILN_RUNNER", order.c_str(), 1);
    RunnerSelector selector(runner_settings_from_environment({}, false));
    auto choice = selector.choose();
    ASSERT_TRUE(choice.ok()) << choice.error().message;
    EXPECT_EQ(choice->label, idle.url()) << order;
  }
}

TEST_F(RunnerSelectorTest, PrefersIdleGpusWhenQueuesAreEqual) {
  FakeRunner one_busy({0});
  FakeRunner free({0});
  one_busy.submit(job_body("hang"));
  ASSERT_TRUE(eventually([&] { return one_busy.get("/v1/health")["jobs_running"] == 1; }));
  RunnerSelector selector({{one_busy.url(), free.url()}, "", std::nullopt});
  auto choice = selector.choose();
  ASSERT_TRUE(choice.ok());
  EXPECT_EQ(choice->label, free.url());
}

TEST_F(RunnerSelectorTest, SkipsRunnersThatDoNotAnswer) {
  FakeRunner up;
  setenv("KILN_RUNNER", ("http://127.0.0.1:1," + up.url()).c_str(), 1);
  RunnerSelector selector(runner_settings_from_environment({}, false));
  auto choice = selector.choose();
  ASSERT_TRUE(choice.ok()) << choice.error().message;
  EXPECT_EQ(choice->label, up.url());
}

TEST_F(RunnerSelectorTest, NoneAnsweringIsAnErrorListingEach) {
  RunnerSelector selector({{"http://127.0.0.1:1", "http://127.0.0.1:2"}, "", std::nullopt});
  auto choice = selector.choose();
  ASSERT_FALSE(choice.ok());
  EXPECT_THAT(choice.error().message, HasSubstr("127.0.0.1:1"));
  EXPECT_THAT(choice.error().message, HasSubstr("127.0.0.1:2"));
}

TEST_F(RunnerSelectorTest, EnvironmentWinsOverTheSettingAndCarriesTheToken) {
  setenv("KILN_RUNNER", " http://a:1 ,, http://b:2 ", 1);
  setenv("KILN_RUNNER_TOKEN", "secret-token-0123456789", 1);
  auto settings = runner_settings_from_environment({"http://setting:3"}, false);
  EXPECT_EQ(settings.urls, (std::vector<std::string>{"http://a:1", "http://b:2"}));
  EXPECT_EQ(settings.token, "secret-token-0123456789");
  unsetenv("KILN_RUNNER");
  EXPECT_EQ(runner_settings_from_environment({"http://setting:3"}, false).urls,
            (std::vector<std::string>{"http://setting:3"}));
}

TEST_F(RunnerSelectorTest, WithoutAnyRunnerSaysHowToConfigureOne) {
  RunnerSelector selector(runner_settings_from_environment({}, false));
  auto choice = selector.choose();
  ASSERT_FALSE(choice.ok());
  EXPECT_THAT(choice.error().message, HasSubstr("kiln runner --gpus"));
  EXPECT_THAT(choice.error().message, HasSubstr("KILN_RUNNER=http://"));
  EXPECT_THAT(choice.error().message, HasSubstr("KILN_RUNNER_TOKEN"));
}

TEST_F(RunnerSelectorTest, ConfiguredRunnersWinOverALocalGpu) {
  TempDir cache;
  FakeRunner shared;
  RunnerSettings settings;
  settings.urls = {shared.url()};
  settings.local = LocalRunnerSettings{{0}, KILN_FAKE_WORKER, cache.path(), ""};
  RunnerSelector selector(settings);
  auto choice = selector.choose();
  ASSERT_TRUE(choice.ok()) << choice.error().message;
  EXPECT_EQ(choice->label, shared.url());
}

TEST_F(RunnerSelectorTest, ALocalGpuGetsAnInProcessRunner) {
  TempDir cache;
  RunnerSettings settings;
  settings.local = LocalRunnerSettings{{0}, KILN_FAKE_WORKER, cache.path(), cache / "locks"};
  std::filesystem::create_directories(cache / "locks");
  RunnerSelector selector(settings);
  auto choice = selector.choose();
  ASSERT_TRUE(choice.ok()) << choice.error().message;
  EXPECT_EQ(choice->label, "local");
  EXPECT_EQ(choice->client.endpoint().url.rfind("http://127.0.0.1:", 0), 0u);
  EXPECT_FALSE(choice->client.endpoint().token.empty());
  auto outcome = choice->client.run(job_body("pass", "", {"16x4096x4096"}), {});
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_EQ(outcome->result["status"], "passed");
  auto again = selector.choose();  // the same server, not a second one
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->client.endpoint().url, choice->client.endpoint().url);
  // Without the token the local runner refuses.
  EXPECT_FALSE(RunnerClient({choice->client.endpoint().url, ""}).health().ok());
}

}  // namespace
}  // namespace kiln::runner
