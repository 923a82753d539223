// `kiln replay` from the outside, on what it infers and where it sends: with no --against, this
// kiln's `kiln mcp` on the run the recording lies in (RUN/sessions/); stateless 2026-07-28
// requests posted with --url to a running `kiln mcp --http`; GPU calls re-sent to a runner when
// one is configured (KILN_RUNNER, or the run's manifest) and compared on their verdict, not on
// what they measured, and "not replayed (no GPU)" without one. The runner is the runner tests'
// in-process server over kiln_fake_worker: nothing needs a GPU or the network.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <sstream>
#include <thread>

#include "kiln/replay/http_connection.h"
#include "kiln/replay/recording.h"
#include "kiln/replay/run_of_recording.h"
#include "kiln/replay/stdio_connection.h"
#include "runner_fixture.h"
#include "support/run_program.h"
#include "support/temp_dir.h"

namespace kiln::replay {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;
using kiln::testing::Ran;
using kiln::testing::read_text;
using kiln::testing::TempDir;
using kiln::testing::write_text;
using ::testing::HasSubstr;
using ::testing::Not;

json request(const json& id, const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

json initialize(int id) {
  return request(id, "initialize",
                 {{"protocolVersion", "2025-11-25"},
                  {"capabilities", json::object()},
                  {"clientInfo", {{"name", "replay-targets-test"}, {"version", "0"}}}});
}

json initialized() { return {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}; }

json tool_call(const json& id, const std::string& tool, json arguments = json::object()) {
  return request(id, "tools/call", {{"name", tool}, {"arguments", std::move(arguments)}});
}

// The records of a recording, edited by `edit` (each record's JSON), written to `to`.
void edit_recording(const fs::path& from, const fs::path& to,
                    const std::function<void(json&)>& edit) {
  std::istringstream lines(read_text(from));
  std::string out;
  for (std::string text; std::getline(lines, text);) {
    json record = json::parse(text);
    edit(record);
    out += record.dump() + "\n";
  }
  write_text(to, out);
}

// The --report verdict of the first call of `what` ("tools/call benchmark").
json verdict_of(const fs::path& report, const std::string& what) {
  const json verdicts = json::parse(read_text(report))["verdicts"];
  for (const auto& v : verdicts)
    if (v["what"] == what) return v;
  return json();
}

class ReplayTargetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The servers the tests start inherit the environment: no runner unless a test gives one.
    unsetenv("KILN_RUNNER");
    unsetenv("KILN_RUNNER_TOKEN");
  }

  // `kiln ARGS...` to completion, with `env` on top of a runner-less environment.
  Ran kiln(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), KILN_BIN);
    env.emplace("KILN_RUNNER", "");
    env.emplace("KILN_TASKS_DIR", "");
    return kiln::testing::run_program(std::move(args), {{}, env, 120s});
  }

  // `kiln setup` of fp16_gemm into dir_/r1 (with `more` options), offline.
  fs::path setup(const std::vector<std::string>& more = {}) {
    std::vector<std::string> args = {"--tasks-dir", KILN_TASKS_DIR, "setup",  "--task",
                                     "fp16_gemm",   "--out",        "--name", "r1"};
    args.insert(args.begin() + 6, dir_.path().string());
    args.insert(args.end(), more.begin(), more.end());
    Ran ran = kiln(args);
    EXPECT_EQ(ran.code, 0) << ran.err;
    return dir_ / "r1";
  }

  // Speaks `messages` to `argv` (a `kiln mcp --record ...`) over stdio, waiting for each answer;
  // returns the answers by request id.
  std::map<std::string, json> speak(const std::vector<std::string>& argv,
                                    const std::vector<json>& messages) {
    std::map<std::string, json> answers;
    auto server = StdioConnection::start(argv);
    EXPECT_TRUE(server) << (server ? "" : server.error().message);
    if (!server) return answers;
    for (const auto& message : messages) {
      EXPECT_TRUE((*server)->send(message));
      if (!message.contains("id")) continue;
      // Progress and logs may come first.
      for (;;) {
        auto answer = (*server)->receive(Clock::now() + 120s);
        EXPECT_TRUE(answer) << (*server)->closed();
        if (!answer) return answers;
        if (answer->contains("id")) {
          answers[(*answer)["id"].dump()] = *answer;
          break;
        }
      }
    }
    (*server)->finish();
    return answers;
  }

  std::vector<std::string> mcp_on_run(const fs::path& run, const fs::path& recording) {
    return {KILN_BIN,    "--log-level", "warn",     "mcp",
            "--run-dir", run.string(),  "--record", recording.string()};
  }

  TempDir dir_;
};

// ---- (a) the default server: this kiln on the recording's run

TEST_F(ReplayTargetsTest, WithoutAgainstARecordingInARunReplaysOnThatRun) {
  const fs::path run = setup();
  // Something only this run answers: its PROMPT.md is the `optimize` prompt.
  write_text(run / "PROMPT.md", read_text(run / "PROMPT.md") + "\nmarker-of-run-r1\n");
  const fs::path recording = run / "sessions" / "agent.jsonl";
  fs::create_directories(recording.parent_path());
  auto answers =
      speak(mcp_on_run(run, recording),
            {initialize(1), initialized(), request(2, "prompts/get", {{"name", "optimize"}}),
             tool_call(3, "get_task")});
  ASSERT_THAT(answers["2"].dump(), HasSubstr("marker-of-run-r1"));
  ASSERT_EQ(run_of_recording(recording), fs::absolute(run));

  // No --tasks-dir, no --against, no KILN_TASKS_DIR: the run is all the server has.
  Ran ran = kiln({"replay", recording.string(), "--report", (dir_ / "run.json").string()});
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("--run-dir " + fs::absolute(run).string()));
  EXPECT_THAT(ran.out, HasSubstr("3 same, 0 differ, 0 new errors"));

  // The same recording outside the run is replayed on no run: the prompt is not the run's.
  const fs::path outside = dir_ / "outside.jsonl";
  fs::copy_file(recording, outside);
  EXPECT_EQ(run_of_recording(outside), std::nullopt);
  Ran elsewhere = kiln({"--tasks-dir", KILN_TASKS_DIR, "replay", outside.string(), "--report",
                        (dir_ / "outside.json").string()});
  EXPECT_EQ(elsewhere.code, 1) << elsewhere.out << elsewhere.err;
  EXPECT_THAT(elsewhere.out, Not(HasSubstr("--run-dir")));
  const json prompt = verdict_of(dir_ / "outside.json", "prompts/get");
  EXPECT_EQ(prompt["outcome"], "differs") << prompt.dump(2);
  ASSERT_FALSE(prompt["differences"].empty());
  EXPECT_THAT(prompt["differences"][0]["path"].get<std::string>(),
              HasSubstr("/result/messages/0/content/text"));
  EXPECT_EQ(verdict_of(dir_ / "outside.json", "tools/call get_task")["outcome"], "same");
}

TEST_F(ReplayTargetsTest, ASessionsFolderWithoutAManifestIsNoRun) {
  fs::create_directories(dir_ / "sessions");
  EXPECT_EQ(run_of_recording(dir_ / "sessions" / "x.jsonl"), std::nullopt);
  write_text(dir_ / "manifest.json", "{}");
  EXPECT_EQ(run_of_recording(dir_ / "sessions" / "x.jsonl"), fs::absolute(dir_.path()));
  EXPECT_EQ(run_of_recording(dir_ / "x.jsonl"), std::nullopt);
}

// ---- (b) stateless 2026-07-28 requests over --url

json stateless(const json& id, const std::string& method, json params = json::object()) {
  params["_meta"] = {
      {"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
      {"io.modelcontextprotocol/clientInfo", {{"name", "replay-targets-test"}, {"version", "0"}}},
      {"io.modelcontextprotocol/clientCapabilities", json::object()}};
  return request(id, method, std::move(params));
}

// A `kiln mcp --http` on a free port, stopped with the test.
class HttpKiln {
 public:
  explicit HttpKiln(std::vector<std::string> extra = {}) {
    port_ = free_port();
    std::vector<std::string> argv{
        KILN_BIN, "--tasks-dir", KILN_TASKS_DIR, "--log-level",
        "warn",   "mcp",         "--http",       "127.0.0.1:" + std::to_string(port_)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto started = StdioConnection::start(argv);
    if (!started) throw std::runtime_error(started.error().message);
    server_ = std::move(started).value();
    for (int i = 0; i < 400 && !accepts(); ++i) std::this_thread::sleep_for(25ms);
  }
  ~HttpKiln() { server_->finish(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/mcp"; }

 private:
  static int free_port() {
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
  bool accepts() const {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(port_));
    const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    close(fd);
    return ok;
  }
  int port_ = 0;
  std::unique_ptr<StdioConnection> server_;
};

TEST_F(ReplayTargetsTest, StatelessRequestsReplayOverUrlToARunningHttpKiln) {
  // One server records and then answers the replay (a kiln --http outlives its stdin, so each
  // one costs a stop); the replay uses a copy of what it recorded until then.
  const fs::path recorded_by_server = dir_ / "server.jsonl";
  const fs::path recording = dir_ / "stateless.jsonl";
  HttpKiln target({"--record", recorded_by_server.string()});
  {
    auto endpoint = parse_http_url(target.url());
    ASSERT_TRUE(endpoint);
    HttpConnection client(*endpoint, 60s);
    for (const json& message :
         {stateless("discover", "server/discover"), stateless(1, "tools/list"),
          stateless(2, "tools/call", {{"name", "get_task"}, {"arguments", json::object()}}),
          stateless(3, "tools/call",
                    {{"name", "read_zoo_entry"}, {"arguments", {{"id", "no_such_entry"}}}})}) {
      ASSERT_TRUE(client.send(message));
      auto answer = client.receive(Clock::now() + 60s);
      ASSERT_TRUE(answer) << client.closed();
      ASSERT_EQ((*answer)["id"], message["id"]) << answer->dump();
      ASSERT_TRUE(answer->contains("result")) << answer->dump();
    }
  }
  fs::copy_file(recorded_by_server, recording);
  // What kiln recorded is the stateless era: no session, no initialize.
  auto recorded = read_recording(recording, ReadMode::kStrict);
  ASSERT_TRUE(recorded) << recorded.error().message;
  ASSERT_EQ(recorded->records.size(), 8u);
  for (const auto& r : recorded->records) EXPECT_EQ(r.session, "");

  const fs::path report = dir_ / "stateless.report.json";
  Ran ran =
      kiln({"replay", recording.string(), "--url", target.url(), "--report", report.string()});
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("against " + target.url()));
  EXPECT_THAT(ran.out, HasSubstr("4 same, 0 differ, 0 new errors"));
  EXPECT_EQ(verdict_of(report, "server/discover")["outcome"], "same");

  // A changed answer is found at its path over the same transport.
  const fs::path edited = dir_ / "stateless-edited.jsonl";
  edit_recording(recording, edited, [](json& record) {
    if (record["dir"] == "out" && record["message"]["id"] == 2)
      record["message"]["result"]["structuredContent"]["name"] = "fp32_gemm";
  });
  Ran changed = kiln({"replay", edited.string(), "--url", target.url(), "--report",
                      (dir_ / "edited.report.json").string()});
  EXPECT_EQ(changed.code, 1) << changed.out << changed.err;
  EXPECT_THAT(changed.out, HasSubstr("3 same, 1 differ, 0 new errors"));
  const json get_task = verdict_of(dir_ / "edited.report.json", "tools/call get_task");
  ASSERT_EQ(get_task["differences"].size(), 1u) << get_task.dump(2);
  EXPECT_EQ(get_task["differences"][0]["path"], "/result/structuredContent/name");
  EXPECT_EQ(get_task["differences"][0]["new"], "fp16_gemm");
}

// ---- (c) GPU calls and a runner

class ReplayOnARunnerTest : public ReplayTargetsTest {
 protected:
  // A run whose manifest names the fake runner, and a session on it with one benchmark.
  void record_benchmark() {
    run_ = setup({"--remote", runner_.url()});
    recording_ = run_ / "sessions" / "gpu.jsonl";
    fs::create_directories(recording_.parent_path());
    auto answers =
        speak(mcp_on_run(run_, recording_),
              {initialize(1), initialized(),
               tool_call(2, "benchmark", {{"source", runner::testing::fake_source("pass")}})});
    benchmark_ = answers["2"];
    ASSERT_EQ(benchmark_["result"]["structuredContent"]["status"], "passed") << benchmark_.dump();
    ASSERT_EQ(benchmark_["result"]["isError"], false) << benchmark_.dump();
  }

  Ran replay(const fs::path& recording, const std::string& report,
             std::vector<std::string> more = {}, std::map<std::string, std::string> env = {}) {
    std::vector<std::string> args = {"replay", recording.string(), "--report",
                                     (dir_ / report).string()};
    args.insert(args.begin(), more.begin(), more.end());
    return kiln(args, env);
  }

  // Jobs the runner has run (a folder each in its cache).
  size_t runner_jobs() const {
    size_t n = 0;
    if (fs::exists(runner_.cache() / "jobs"))
      for ([[maybe_unused]] const auto& entry : fs::directory_iterator(runner_.cache() / "jobs"))
        ++n;
    return n;
  }

  runner::testing::FakeRunner runner_;
  fs::path run_, recording_;
  json benchmark_;
};

TEST_F(ReplayOnARunnerTest, TheRunsRunnerGetsTheBenchmarkAgainAndItsVerdictIsCompared) {
  record_benchmark();
  Ran ran = replay(recording_, "same.json");
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("2 same, 0 differ, 0 new errors"));
  EXPECT_THAT(ran.out, Not(HasSubstr("no GPU")));
  const json same = verdict_of(dir_ / "same.json", "tools/call benchmark");
  EXPECT_EQ(same["outcome"], "same") << same.dump(2);
  EXPECT_EQ(same["note"], "replayed on the runner; measured numbers not compared");

  // Another measurement: every time, speedup, TFLOP/s and the geomean changed, in the
  // structured result and in the text. Still the same verdict.
  const fs::path measured = run_ / "sessions" / "measured.jsonl";
  std::string text_before, text_after;
  edit_recording(recording_, measured, [&](json& record) {
    if (record["dir"] != "out" || record["message"]["id"] != 2) return;
    json& result = record["message"]["result"];
    json& structured = result["structuredContent"];
    for (auto& row : structured["workloads"]) {
      row["time_us"]["median"] = row["time_us"]["median"].get<double>() * 1.07;
      row["time_us"]["samples"] = 37;
      row["speedup"] = 1.0233;
      row["tflops"] = 611.5;
      row["pct_of_peak"] = 61.8;
      row["errors"]["max_abs"] = 0.0042;
    }
    structured["summary"]["geomean_speedup"] = 1.0233;
    structured["gpu"]["sm_clock_mhz"]["median"] = 1755;
    text_before = result["content"][0]["text"].get<std::string>();
    std::string text = std::regex_replace(text_before, std::regex(R"(\b1\.100x)"), "1.023x");
    text = std::regex_replace(text, std::regex(R"(\b(\d+)\.(\d)\d\b)"), "$01.$029");
    text = std::regex_replace(text, std::regex("   20 "), "   37 ");
    result["content"][0]["text"] = text_after = text;
  });
  ASSERT_NE(text_before, text_after);
  Ran again = replay(measured, "measured.json");
  EXPECT_EQ(again.code, 0) << again.out << again.err;
  EXPECT_EQ(verdict_of(dir_ / "measured.json", "tools/call benchmark")["outcome"], "same");

  // A verdict changed: a gate that failed, and a workload count that was lower.
  const fs::path gate = run_ / "sessions" / "gate.jsonl";
  edit_recording(recording_, gate, [](json& record) {
    if (record["dir"] != "out" || record["message"]["id"] != 2) return;
    json& structured = record["message"]["result"]["structuredContent"];
    structured["gates"][0]["state"] = "failed";
    structured["gates"][0]["passed"] = false;
    structured["summary"]["passed"] = structured["summary"]["passed"].get<int>() - 1;
  });
  Ran differs = replay(gate, "gate.json");
  EXPECT_EQ(differs.code, 1) << differs.out << differs.err;
  const json verdict = verdict_of(dir_ / "gate.json", "tools/call benchmark");
  EXPECT_EQ(verdict["outcome"], "differs");
  std::vector<std::string> paths;
  for (const auto& d : verdict["differences"]) paths.push_back(d["path"]);
  EXPECT_THAT(paths, ::testing::UnorderedElementsAre("/result/structuredContent/gates/0/passed",
                                                     "/result/structuredContent/gates/0/state",
                                                     "/result/structuredContent/summary/passed"));
}

TEST_F(ReplayOnARunnerTest, WithoutARunnerTheBenchmarkIsNotReplayedAndKilnRunnerBringsItBack) {
  record_benchmark();
  // Outside the run: no manifest names the runner, and KILN_RUNNER is empty.
  const fs::path outside = dir_ / "outside.jsonl";
  fs::copy_file(recording_, outside);
  Ran ran = replay(outside, "no_gpu.json", {"--tasks-dir", KILN_TASKS_DIR});
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("1 same, 0 differ, 0 new errors (1 not replayed (no GPU))"));
  const json skipped = verdict_of(dir_ / "no_gpu.json", "tools/call benchmark");
  EXPECT_EQ(skipped["outcome"], "not replayed (no GPU)");
  EXPECT_THAT(skipped["note"].get<std::string>(), HasSubstr("KILN_RUNNER"));
  EXPECT_EQ(json::parse(read_text(dir_ / "no_gpu.json"))["summary"]["not_replayed_no_gpu"], 1);

  // KILN_RUNNER names it: the call is sent, to the server `kiln replay` starts and to the runner.
  const size_t jobs_before = runner_jobs();
  Ran with = replay(outside, "with_runner.json", {"--tasks-dir", KILN_TASKS_DIR},
                    {{"KILN_RUNNER", runner_.url()}});
  EXPECT_EQ(with.code, 0) << with.out << with.err;
  EXPECT_EQ(verdict_of(dir_ / "with_runner.json", "tools/call benchmark")["outcome"], "same");
  EXPECT_EQ(runner_jobs(), jobs_before + 1);
}

}  // namespace
}  // namespace kiln::replay
