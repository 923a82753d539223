#include "kiln/replay/replayer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>

namespace kiln::replay {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

// What a fake server saw; it outlives the connection, which the replay destroys.
struct Seen {
  std::vector<json> sent;
  std::vector<std::string> raw;
  bool finished = false;
};

// A server in the test: `answer` sees each message sent and queues what the server says back.
class FakeConnection : public Connection {
 public:
  using Handler = std::function<void(const json& message, std::deque<json>& out)>;
  explicit FakeConnection(Handler answer, std::shared_ptr<Seen> seen = std::make_shared<Seen>())
      : answer_(std::move(answer)), seen_(std::move(seen)) {}

  Status send(const json& message) override {
    seen_->sent.push_back(message);
    if (message.is_array()) {
      for (const auto& m : message) answer_(m, queue_);
    } else {
      answer_(message, queue_);
    }
    return Ok{};
  }
  Status send_raw(const std::string& text) override {
    seen_->raw.push_back(text);
    queue_.push_back(json{
        {"jsonrpc", "2.0"}, {"id", nullptr}, {"error", {{"code", -32700}, {"message", "parse"}}}});
    return Ok{};
  }
  std::optional<json> receive(Clock::time_point) override {
    if (queue_.empty()) return std::nullopt;
    json m = queue_.front();
    queue_.pop_front();
    return m;
  }
  std::string closed() override { return queue_.empty() && gone ? "the fake server is gone" : ""; }
  void finish() override { seen_->finished = true; }

  bool gone = false;

 private:
  Handler answer_;
  std::shared_ptr<Seen> seen_;
  std::deque<json> queue_;
};

std::string line(const char* dir, const json& message) {
  return json{{"ts", "2026-12-02T06:00:00.000Z"}, {"dir", dir}, {"message", message}}.dump() + "\n";
}

json request(int id, const std::string& method, json params = json::object()) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
}

json call(int id, const std::string& tool, json arguments = json::object()) {
  return request(id, "tools/call", {{"name", tool}, {"arguments", arguments}});
}

json result(const json& id, json value) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", value}};
}

json text_result(const json& id, const std::string& text, bool error = false) {
  return result(id, {{"content", {{{"type", "text"}, {"text", text}}}}, {"isError", error}});
}

const std::string kHandshake =
    line("in", request(1, "initialize", {{"protocolVersion", "2025-11-25"}})) +
    line("out", result(1, {{"protocolVersion", "2025-11-25"},
                           {"serverInfo", {{"name", "kiln"}, {"version", "0.1.0"}}}})) +
    line("in", json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});

// Answers initialize as kiln would, and everything else through `tools`.
FakeConnection::Handler kiln_like(std::function<void(const json&, std::deque<json>&)> tools) {
  return [tools](const json& m, std::deque<json>& out) {
    if (m.value("method", "") == "initialize") {
      out.push_back(result(m["id"], {{"protocolVersion", "2025-11-25"},
                                     {"serverInfo", {{"name", "kiln"}, {"version", "0.2.0"}}}}));
      return;
    }
    if (m.contains("method") && !m.contains("id")) return;  // a notification
    tools(m, out);
  };
}

struct Run {
  ReplayReport report;
  std::shared_ptr<Seen> seen = std::make_shared<Seen>();
};

Run replay_text(const std::string& text, FakeConnection::Handler handler,
                ReplayOptions options = {}) {
  auto recording = parse_recording(text, "t.jsonl", ReadMode::kStrict);
  EXPECT_TRUE(recording) << (recording ? "" : recording.error().message);
  Run run;
  options.answer_timeout = std::chrono::seconds(1);
  auto report = replay_recording(*recording, options, [&]() -> Result<std::unique_ptr<Connection>> {
    return std::unique_ptr<Connection>(new FakeConnection(handler, run.seen));
  });
  EXPECT_TRUE(report);
  run.report = *report;
  return run;
}

TEST(ReplayerTest, AnswersThatMatchAreTheSameDespiteVolatileFields) {
  const std::string text = kHandshake + line("in", call(2, "compile")) +
                           line("out", text_result(2, "compile kernel.cu: ok (3.10 s)"));
  auto run = replay_text(text, kiln_like([](const json& m, std::deque<json>& out) {
                           out.push_back(text_result(m["id"], "compile kernel.cu: ok (0.02 s)"));
                         }));
  const ReplaySummary summary = run.report.summary();
  EXPECT_EQ(summary.same, 2u);
  EXPECT_TRUE(summary.passed());
  EXPECT_EQ(summary_line(summary), "2 same, 0 differ, 0 new errors");
  EXPECT_TRUE(run.seen->finished);
}

TEST(ReplayerTest, AChangedAnswerIsADifferenceWithItsPath) {
  const std::string text = kHandshake + line("in", call(2, "get_task")) +
                           line("out", text_result(2, "fp16_gemm: 10 workloads"));
  auto run = replay_text(text, kiln_like([](const json& m, std::deque<json>& out) {
                           out.push_back(text_result(m["id"], "fp16_gemm: 11 workloads"));
                         }));
  ASSERT_EQ(run.report.verdicts.size(), 2u);
  const Verdict& v = run.report.verdicts[1];
  EXPECT_EQ(v.outcome, Outcome::kDiffers);
  EXPECT_EQ(v.line, 4u);
  EXPECT_EQ(v.what, "tools/call get_task");
  ASSERT_EQ(v.differences.size(), 1u);
  EXPECT_EQ(v.differences[0].path, "/result/content/0/text");
  EXPECT_FALSE(run.report.summary().passed());
  const std::string shown = format_verdict(v);
  EXPECT_THAT(shown, HasSubstr("line 4 tools/call get_task: differs"));
  EXPECT_THAT(shown, HasSubstr("/result/content/0/text"));
  EXPECT_THAT(shown, HasSubstr("old: \"fp16_gemm: 10 workloads\""));
  EXPECT_THAT(shown, HasSubstr("new: \"fp16_gemm: 11 workloads\""));
}

TEST(ReplayerTest, ASuccessThatNowFailsIsANewError) {
  const std::string text =
      kHandshake + line("in", call(2, "simulate")) + line("out", text_result(2, "4/4 pass"));
  auto run = replay_text(text, kiln_like([](const json& m, std::deque<json>& out) {
                           out.push_back(text_result(m["id"], "internal error", true));
                         }));
  EXPECT_EQ(run.report.summary().new_errors, 1u);
  EXPECT_EQ(summary_line(run.report.summary()), "1 same, 0 differ, 1 new error");
}

TEST(ReplayerTest, NoAnswerIsANewErrorThatSaysWhy) {
  const std::string text =
      kHandshake + line("in", call(2, "simulate")) + line("out", text_result(2, "4/4 pass"));
  auto handler = kiln_like([](const json&, std::deque<json>&) {});
  auto recording = parse_recording(text, "t.jsonl", ReadMode::kStrict);
  ASSERT_TRUE(recording);
  ReplayOptions options;
  options.answer_timeout = std::chrono::seconds(1);
  auto report = replay_recording(*recording, options, [&]() -> Result<std::unique_ptr<Connection>> {
    auto connection = std::make_unique<FakeConnection>(handler);
    connection->gone = true;
    return std::unique_ptr<Connection>(std::move(connection));
  });
  ASSERT_TRUE(report);
  const Verdict& v = report->verdicts[1];
  EXPECT_EQ(v.outcome, Outcome::kNewError);
  EXPECT_THAT(v.note, HasSubstr("the fake server is gone"));
}

TEST(ReplayerTest, GpuCallsAreNotReplayedWithoutARunner) {
  const std::string text = kHandshake + line("in", call(2, "benchmark", {{"source", "x"}})) +
                           line("out", text_result(2, "benchmark r-1: PASSED")) +
                           line("in", call(3, "synccheck", {{"engine", "gpu"}})) +
                           line("out", text_result(3, "clean")) +
                           line("in", call(4, "synccheck", {{"engine", "static"}})) +
                           line("out", text_result(4, "clean"));
  std::vector<std::string> tools;
  auto handler = kiln_like([&tools](const json& m, std::deque<json>& out) {
    tools.push_back(m["params"]["name"].get<std::string>());
    out.push_back(text_result(
        m["id"], m["params"]["name"] == "benchmark" ? "benchmark r-1: PASSED" : "clean"));
  });
  auto run = replay_text(text, handler);
  EXPECT_EQ(tools, std::vector<std::string>{"synccheck"});
  const ReplaySummary summary = run.report.summary();
  EXPECT_EQ(summary.no_gpu, 2u);
  EXPECT_EQ(summary.same, 2u);
  EXPECT_TRUE(summary.passed());
  EXPECT_EQ(run.report.verdicts[1].outcome, Outcome::kNoGpu);
  EXPECT_THAT(summary_line(summary), HasSubstr("2 not replayed (no GPU)"));

  tools.clear();
  ReplayOptions gpu;
  gpu.gpu = true;
  auto with_runner = replay_text(text, handler, gpu);
  EXPECT_EQ(tools.size(), 3u);
  EXPECT_EQ(with_runner.report.summary().same, 4u);
}

TEST(ReplayerTest, ACallAnsweredNoRunnerIsAGpuCall) {
  json no_runner = text_result(2, "no GPU runner", true);
  no_runner["result"]["structuredContent"] = {{"error", {{"code", "no_runner"}}}};
  const std::string text = kHandshake + line("in", call(2, "racecheck")) + line("out", no_runner);
  auto run = replay_text(text, kiln_like([](const json& m, std::deque<json>& out) {
                           out.push_back(text_result(m["id"], "clean"));
                         }));
  EXPECT_EQ(run.report.verdicts[1].outcome, Outcome::kNoGpu);
}

TEST(ReplayerTest, OnlyReplaysTheNamedTools) {
  const std::string text = kHandshake + line("in", call(2, "get_task")) +
                           line("out", text_result(2, "task")) + line("in", call(3, "compile")) +
                           line("out", text_result(3, "ok"));
  ReplayOptions options;
  options.only = {"compile"};
  auto run = replay_text(
      text, kiln_like([](const json& m, std::deque<json>& out) {
        out.push_back(text_result(m["id"], m["params"]["name"] == "compile" ? "ok" : "task"));
      }),
      options);
  EXPECT_EQ(run.report.verdicts[1].outcome, Outcome::kSkipped);
  EXPECT_EQ(run.report.verdicts[2].outcome, Outcome::kSame);
}

TEST(ReplayerTest, ACancellationNamesTheLiveRequest) {
  const std::string text = kHandshake + line("in", call(2, "simulate")) +
                           line("in", json{{"jsonrpc", "2.0"},
                                           {"method", "notifications/cancelled"},
                                           {"params", {{"requestId", 2}}}});
  std::vector<json> cancelled;
  auto run = replay_text(text, [&cancelled](const json& m, std::deque<json>& out) {
    if (m.value("method", "") == "initialize")
      out.push_back(result(m["id"], {{"protocolVersion", "2025-11-25"}}));
    if (m.value("method", "") == "notifications/cancelled") cancelled.push_back(m);
  });
  ASSERT_EQ(cancelled.size(), 1u);
  EXPECT_EQ(cancelled[0]["params"]["requestId"], 2);
  EXPECT_EQ(run.report.verdicts[1].outcome, Outcome::kSame);
  EXPECT_THAT(run.report.verdicts[1].note, HasSubstr("no answer, as in the recording"));
}

TEST(ReplayerTest, AServerRequestGetsTheRecordedAnswerUnderTheLiveId) {
  const std::string text = kHandshake + line("in", call(2, "needs_roots")) +
                           line("out", request(0, "roots/list")) +
                           line("in", result(0, {{"roots", {{{"uri", "file:///work"}}}}})) +
                           line("out", text_result(2, "1 root"));
  std::vector<json> answers;
  auto run = replay_text(text, kiln_like([&answers](const json& m, std::deque<json>& out) {
                           if (m.contains("method")) {  // the call: ask the client first
                             out.push_back(request(77, "roots/list"));
                             return;
                           }
                           answers.push_back(m);
                           out.push_back(text_result(2, "1 root"));
                         }));
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0]["id"], 77);
  EXPECT_EQ(answers[0]["result"]["roots"][0]["uri"], "file:///work");
  EXPECT_TRUE(run.report.summary().passed());
}

TEST(ReplayerTest, AServerRequestTheRecordingLacksIsAnsweredSensibly) {
  const std::string text =
      kHandshake + line("in", call(2, "get_task")) + line("out", text_result(2, "task"));
  std::vector<json> answers;
  auto run = replay_text(text, kiln_like([&answers](const json& m, std::deque<json>& out) {
                           if (m.contains("method")) {
                             out.push_back(request(90, "ping"));
                             out.push_back(request(91, "sampling/createMessage"));
                             out.push_back(text_result(m["id"], "task"));
                             return;
                           }
                           answers.push_back(m);
                         }));
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[0]["id"], 90);
  EXPECT_EQ(answers[0]["result"], json::object());
  EXPECT_EQ(answers[1]["error"]["code"], -32601);
  EXPECT_TRUE(run.report.summary().passed());
  EXPECT_EQ(run.report.notes.size(), 2u);
}

TEST(ReplayerTest, RawTextIsSentAsItWasAndItsAnswerCompared) {
  const std::string text = kHandshake + line("in", json{{"raw", "not json"}}) +
                           line("out", json{{"jsonrpc", "2.0"},
                                            {"id", nullptr},
                                            {"error", {{"code", -32700}, {"message", "parse"}}}});
  auto run = replay_text(text, kiln_like([](const json&, std::deque<json>&) {}));
  EXPECT_EQ(run.seen->raw, std::vector<std::string>{"not json"});
  ASSERT_EQ(run.report.verdicts.size(), 2u);
  EXPECT_EQ(run.report.verdicts[1].what, "text that is not JSON");
  EXPECT_EQ(run.report.verdicts[1].outcome, Outcome::kSame);
}

TEST(ReplayerTest, TheReportAsJsonHasEveryVerdictAndTheSummary) {
  const std::string text =
      kHandshake + line("in", call(2, "get_task")) + line("out", text_result(2, "a"));
  auto run = replay_text(text, kiln_like([](const json& m, std::deque<json>& out) {
                           out.push_back(text_result(m["id"], "b"));
                         }));
  const json report = report_json(run.report);
  EXPECT_EQ(report["summary"]["same"], 1);
  EXPECT_EQ(report["summary"]["differ"], 1);
  EXPECT_EQ(report["summary"]["passed"], false);
  EXPECT_EQ(report["verdicts"][1]["differences"][0]["path"], "/result/content/0/text");
  EXPECT_EQ(report["verdicts"][1]["differences"][0]["old"], "a");
  EXPECT_EQ(report["verdicts"][1]["differences"][0]["new"], "b");
}

TEST(ReplayerTest, MapPutsThisMachinesPathsIntoTheRecording) {
  const std::string text =
      kHandshake + line("in", call(2, "get_task", {{"name", "/KILN_SOURCE_DIR/tasks/x"}})) +
      line("out", text_result(2, "starter: /KILN_SOURCE_DIR/tasks/x/starter.cu"));
  ReplayOptions options;
  options.map = {{"/KILN_SOURCE_DIR", "/src/kiln"}};
  auto run =
      replay_text(text, kiln_like([](const json& m, std::deque<json>& out) {
                    out.push_back(text_result(
                        m["id"], "starter: " + m["params"]["arguments"]["name"].get<std::string>() +
                                     "/starter.cu"));
                  }),
                  options);
  EXPECT_EQ(run.seen->sent[2]["params"]["arguments"]["name"], "/src/kiln/tasks/x");
  EXPECT_TRUE(run.report.summary().passed()) << format_report(run.report);
}

}  // namespace
}  // namespace kiln::replay
