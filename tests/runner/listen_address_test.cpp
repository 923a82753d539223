// HOST:PORT and runner URLs.
#include "kiln/runner/listen_address.h"

#include <gmock/gmock.h>

#include "kiln/base/file.h"
#include "kiln/runner/gpu_discovery.h"
#include "kiln/runner/random_token.h"
#include "runner_fixture.h"

namespace kiln::runner {
namespace {

using ::testing::HasSubstr;

TEST(ListenAddress, ParsesHostAndPort) {
  auto v4 = parse_host_port("127.0.0.1:8000");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 8000);
  auto v6 = parse_host_port("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(runner_url(*v6), "http://[::1]:0");
  for (const char* bad : {"8000", ":8000", "host:", "host:99999", "host:80a"})
    EXPECT_FALSE(parse_host_port(bad).ok()) << bad;
}

TEST(ListenAddress, ParsesRunnerUrls) {
  auto url = parse_runner_url("http://gpu-box:8000/");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->host, "gpu-box");
  EXPECT_THAT(parse_runner_url("https://gpu:8000").error().message, HasSubstr("SSH tunnel"));
  EXPECT_FALSE(parse_runner_url("gpu:8000").ok());
  EXPECT_FALSE(parse_runner_url("http://gpu:8000/v1").ok());
}

TEST(GpuList, ParsesIndices) {
  auto gpus = parse_gpu_list("0, 1,3");
  ASSERT_TRUE(gpus.ok());
  EXPECT_EQ(*gpus, (std::vector<int>{0, 1, 3}));
  for (const char* bad : {"", "a", "0,0", "1,,2", "-1"})
    EXPECT_FALSE(parse_gpu_list(bad).ok()) << bad;
}

TEST(GpuDiscovery, ReportsTheIndicesEvenWithoutNvidiaSmi) {
  auto found = discover_gpus({4, 7});
  ASSERT_EQ(found.gpus.size(), 2u);
  EXPECT_EQ(found.gpus[1].index, 7);
}

// Reading a token file is kiln::http::read_token_file's (tests/base/token_file_test.cpp).
TEST(Token, DrawsRandomTokens) {
  EXPECT_EQ(random_token().size(), 32u);
  EXPECT_NE(random_token(), random_token());
}

}  // namespace
}  // namespace kiln::runner
