// kiln replay against the built kiln: a session recorded by `kiln mcp --record` replays with
// nothing different over stdio and over Streamable HTTP, an answer changed in the recording is
// found at its JSON path, and `kiln replay` exits 0 or 1 accordingly.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <thread>

#include "kiln/base/file.h"
#include "kiln/replay/http_connection.h"
#include "kiln/replay/replayer.h"
#include "kiln/replay/stdio_connection.h"
#include "kiln/replay/trace.h"

namespace kiln::replay {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

class ReplayEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/kiln-replay-e2e-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> kiln_mcp(std::vector<std::string> extra = {}) {
    std::vector<std::string> argv{KILN_BIN,      "--tasks-dir", KILN_TASKS_DIR,
                                  "--log-level", "warn",        "mcp"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  // Speaks a short session to `kiln mcp --record FILE` as a client would, waiting for each
  // answer, and returns the recording.
  fs::path record_session() {
    const fs::path file = dir_ / "session.jsonl";
    auto server = StdioConnection::start(kiln_mcp({"--record", file.string()}));
    EXPECT_TRUE(server) << (server ? "" : server.error().message);
    auto ask = [&](const json& message) {
      ASSERT_TRUE((*server)->send(message));
      if (!message.contains("id")) return;
      auto answer = (*server)->receive(Clock::now() + 60s);
      ASSERT_TRUE(answer) << (*server)->closed();
    };
    ask({{"jsonrpc", "2.0"},
         {"id", 1},
         {"method", "initialize"},
         {"params",
          {{"protocolVersion", "2025-11-25"},
           {"capabilities", json::object()},
           {"clientInfo", {{"name", "replay-test"}, {"version", "0"}}}}}});
    ask({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
    ask({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}});
    ask({{"jsonrpc", "2.0"},
         {"id", "call-3"},
         {"method", "tools/call"},
         {"params", {{"name", "get_task"}, {"arguments", json::object()}}}});
    ask({{"jsonrpc", "2.0"},
         {"id", 4},
         {"method", "tools/call"},
         {"params", {{"name", "read_zoo_entry"}, {"arguments", {{"id", "no_such_entry"}}}}}});
    ask({{"jsonrpc", "2.0"}, {"id", 5}, {"method", "tools/call"}, {"params", {{"name", "nope"}}}});
    EXPECT_TRUE((*server)->send_raw("this is not json"));
    EXPECT_TRUE((*server)->receive(Clock::now() + 60s));
    (*server)->finish();
    return file;
  }

  ReplayReport replay_file(const fs::path& file, const ConnectionFactory& connect) {
    auto recording = read_recording(file, ReadMode::kStrict);
    EXPECT_TRUE(recording) << (recording ? "" : recording.error().message);
    ReplayOptions options;
    options.answer_timeout = 60s;
    auto report = replay_recording(*recording, options, connect);
    EXPECT_TRUE(report) << (report ? "" : report.error().message);
    return *report;
  }

  ConnectionFactory over_stdio() {
    return [this]() -> Result<std::unique_ptr<Connection>> {
      auto started = StdioConnection::start(kiln_mcp());
      if (!started) return started.error();
      return std::unique_ptr<Connection>(std::move(started).value());
    };
  }

  fs::path dir_;
};

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t size = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  close(fd);
  return ntohs(address.sin_port);
}

bool accepts(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return ok;
}

std::string all_differences(const ReplayReport& report) { return format_report(report); }

TEST_F(ReplayEndToEndTest, ARecordedSessionReplaysTheSameOverStdio) {
  const fs::path file = record_session();
  const ReplayReport report = replay_file(file, over_stdio());
  const ReplaySummary summary = report.summary();
  EXPECT_TRUE(summary.passed()) << all_differences(report);
  EXPECT_EQ(summary.same, 6u) << all_differences(report);
}

TEST_F(ReplayEndToEndTest, AChangedAnswerIsFoundAtItsPath) {
  const fs::path file = record_session();
  // Change what get_task answered, as a regression in kiln would.
  auto original = read_file(file);
  ASSERT_TRUE(original);
  std::string changed;
  std::istringstream lines(*original);
  for (std::string text; std::getline(lines, text);) {
    json record = json::parse(text);
    if (record["dir"] == "out" && record["message"]["id"] == "call-3")
      record["message"]["result"]["structuredContent"]["name"] = "fp32_gemm";
    changed += record.dump() + "\n";
  }
  const fs::path edited = dir_ / "edited.jsonl";
  ASSERT_TRUE(write_file(edited, changed));
  const ReplayReport report = replay_file(edited, over_stdio());
  ASSERT_EQ(report.summary().differ, 1u) << all_differences(report);
  for (const auto& v : report.verdicts) {
    if (v.outcome != Outcome::kDiffers) continue;
    EXPECT_EQ(v.what, "tools/call get_task");
    ASSERT_EQ(v.differences.size(), 1u);
    EXPECT_EQ(v.differences[0].path, "/result/structuredContent/name");
    EXPECT_EQ(*v.differences[0].old, "fp32_gemm");
    EXPECT_EQ(*v.differences[0].now, "fp16_gemm");
  }
}

TEST_F(ReplayEndToEndTest, ReplaysOverStreamableHttpAndAnHttpRecordingOverStdio) {
  const fs::path file = record_session();
  const int port = free_port();
  const fs::path http_recording = dir_ / "http.jsonl";
  auto server = StdioConnection::start(kiln_mcp(
      {"--http", "127.0.0.1:" + std::to_string(port), "--record", http_recording.string()}));
  ASSERT_TRUE(server) << server.error().message;
  auto endpoint = parse_http_url("http://127.0.0.1:" + std::to_string(port) + "/mcp");
  ASSERT_TRUE(endpoint);
  auto over_http = [&]() -> Result<std::unique_ptr<Connection>> {
    return std::unique_ptr<Connection>(new HttpConnection(*endpoint, 60s));
  };
  // Wait for it to listen (a connection accepted), without a message that it would record.
  for (int i = 0; i < 400 && !accepts(port); ++i) std::this_thread::sleep_for(25ms);
  const ReplayReport report = replay_file(file, over_http);
  EXPECT_TRUE(report.summary().passed()) << all_differences(report);
  EXPECT_GE(report.summary().same, 6u) << all_differences(report);

  (*server)->finish();
  // What kiln recorded over HTTP (with its session ids) replays over stdio.
  auto recorded = read_recording(http_recording, ReadMode::kStrict);
  ASSERT_TRUE(recorded) << recorded.error().message;
  bool has_session = false;
  for (const auto& r : recorded->records) has_session = has_session || !r.session.empty();
  EXPECT_TRUE(has_session);
  const ReplayReport back = replay_file(http_recording, over_stdio());
  EXPECT_TRUE(back.summary().passed()) << all_differences(back);
}

TEST_F(ReplayEndToEndTest, TheKilnReplayCommandExitsZeroOnlyWhenNothingDiffers) {
  const fs::path file = record_session();
  const fs::path report = dir_ / "report.json";
  const std::string command = std::string(KILN_BIN) + " --tasks-dir " + KILN_TASKS_DIR +
                              " replay " + file.string() + " --quiet --report " + report.string() +
                              " > " + (dir_ / "out.txt").string() + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0);
  auto printed = read_file(dir_ / "out.txt");
  ASSERT_TRUE(printed);
  EXPECT_THAT(*printed, HasSubstr("6 same, 0 differ, 0 new errors"));
  auto written = read_file(report);
  ASSERT_TRUE(written);
  const json verdicts = json::parse(*written);
  EXPECT_EQ(verdicts["summary"]["passed"], true);

  // The trace of the same session.
  auto recording = read_recording(file, ReadMode::kLenient);
  ASSERT_TRUE(recording);
  const std::string trace = format_trace(build_trace(*recording));
  EXPECT_THAT(trace, HasSubstr("3 tool call(s)"));
  EXPECT_THAT(trace, HasSubstr("get_task"));
  EXPECT_THAT(trace, HasSubstr("isError"));
}

}  // namespace
}  // namespace kiln::replay
