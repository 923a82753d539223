#include "kiln/mcp/stdio_transport.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <thread>

#include "kiln/mcp/json_rpc.h"
#include "temp_dir.h"
#include "test_server.h"

namespace kiln::mcp {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

json request(const json& id, const std::string& method, json params = json::object()) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
}

std::string line(const json& message) { return message.dump() + "\n"; }

const std::string kInitialize = line(request(
    0, "initialize", {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object()}}));
const std::string kInitialized = line(make_notification("notifications/initialized", nullptr));

// serve_stdio on a thread, fed and read through pipes, with timeouts on every read.
class StdioPeer {
 public:
  StdioPeer(const Server& server, StdioOptions options) {
    int to_server[2];
    int from_server[2];
    if (pipe(to_server) != 0 || pipe(from_server) != 0) throw std::runtime_error("pipe failed");
    server_in_ = fdopen(to_server[0], "r");
    server_out_ = fdopen(from_server[1], "w");
    to_server_ = to_server[1];
    from_server_ = from_server[0];
    const Server* served = &server;
    done_ = std::async(std::launch::async, [this, served, options] {
      int code = serve_stdio(*served, server_in_, server_out_, options);
      std::fclose(server_out_);  // the reader sees end of file
      return code;
    });
  }
  ~StdioPeer() {
    close_input();
    if (done_.valid()) done_.wait();
    std::fclose(server_in_);
    ::close(from_server_);
  }
  StdioPeer(const StdioPeer&) = delete;
  StdioPeer& operator=(const StdioPeer&) = delete;

  void send(const std::string& text) {
    size_t sent = 0;
    while (sent < text.size()) {
      ssize_t n = ::write(to_server_, text.data() + sent, text.size() - sent);
      if (n <= 0) throw std::runtime_error("write to the server failed");
      sent += static_cast<size_t>(n);
    }
  }

  // The next line the server wrote, without its newline; nullopt at end of
  // output or when nothing arrives within `timeout`.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout = 5s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string out = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return out;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) return std::nullopt;
      pollfd fd{from_server_, POLLIN, 0};
      if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      char chunk[4096];
      ssize_t n = ::read(from_server_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  // The next line as JSON; fails the test when it is missing or not JSON.
  json read_message() {
    auto text = read_line();
    if (!text) {
      ADD_FAILURE() << "the server wrote no line";
      return json();
    }
    json message = json::parse(*text, nullptr, false);
    if (message.is_discarded()) ADD_FAILURE() << "not one line of JSON: " << *text;
    return message;
  }

  void close_input() {
    if (to_server_ >= 0) ::close(to_server_);
    to_server_ = -1;
  }

  // Closes the input and returns serve_stdio's exit code (-1 when it did not end in time).
  int finish(std::chrono::milliseconds timeout = 5s) {
    close_input();
    if (done_.wait_for(timeout) != std::future_status::ready) return -1;
    return done_.get();
  }

 private:
  std::FILE* server_in_ = nullptr;
  std::FILE* server_out_ = nullptr;
  int to_server_ = -1;
  int from_server_ = -1;
  std::string buffer_;
  std::future<int> done_;
};

class StdioTransportTest : public ::testing::Test {
 protected:
  std::shared_ptr<testing::SlowProbe> probe = std::make_shared<testing::SlowProbe>();
  std::unique_ptr<Server> server = testing::make_test_server(probe);
};

TEST_F(StdioTransportTest, EachResponseIsExactlyOneLineOfValidJson) {
  StdioPeer peer(*server, {});
  peer.send(kInitialize + kInitialized);
  EXPECT_EQ(peer.read_message()["id"], 0);
  peer.send(line(request(1, "tools/list")));
  json tools = peer.read_message();
  EXPECT_EQ(tools["id"], 1);
  EXPECT_EQ(tools["result"]["tools"].size(), 8u);
  // A text with newlines still comes back on one line.
  peer.send(line(
      request(2, "tools/call", {{"name", "echo"}, {"arguments", {{"text", "two\nlines\r\n"}}}})));
  json echo = peer.read_message();
  EXPECT_EQ(echo["id"], 2);
  EXPECT_EQ(echo["result"]["content"][0]["text"], "two\nlines\r\n");
  EXPECT_EQ(peer.finish(), 0);
  EXPECT_EQ(peer.read_line(100ms), std::nullopt) << "nothing more may be written";
}

// A tool that asks the client (2025 revisions): kiln writes its request as a line, the reader
// routes the client's response line to the waiting call, and the call then answers.
TEST_F(StdioTransportTest, TheClientsAnswerToKilnsRequestReachesTheWaitingCall) {
  ASSERT_TRUE(server->tools().add(testing::ask_client_tool()));
  StdioPeer peer(*server, {});
  peer.send(line(request(0, "initialize",
                         {{"protocolVersion", "2025-11-25"},
                          {"capabilities", {{"sampling", json::object()}}}})) +
            kInitialized);
  peer.read_message();
  peer.send(line(request(4, "tools/call", {{"name", "ask_client"}})));
  json asked = peer.read_message();
  EXPECT_EQ(asked["method"], "sampling/createMessage");
  ASSERT_TRUE(asked.contains("id"));
  // Other requests are answered while the call waits.
  peer.send(line(request(5, "ping")));
  EXPECT_EQ(peer.read_message()["id"], 5);
  peer.send(line(make_result(asked["id"], {{"model", "stdio-model"}})));
  json answer = peer.read_message();
  EXPECT_EQ(answer["id"], 4);
  EXPECT_EQ(answer["result"]["structuredContent"]["answer"]["model"], "stdio-model");
  EXPECT_EQ(peer.finish(), 0);
}

TEST_F(StdioTransportTest, ProgressNotificationsAndTheResponseAreSeparateLines) {
  StdioPeer peer(*server, {});
  peer.send(kInitialize + kInitialized);
  peer.read_message();
  peer.send(
      line(request(3, "tools/call", {{"name", "progress"}, {"_meta", {{"progressToken", "p"}}}})));
  std::vector<json> messages;
  for (int i = 0; i < 4; ++i) messages.push_back(peer.read_message());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(messages[i]["method"], "notifications/progress");
    EXPECT_EQ(messages[i]["params"]["progressToken"], "p");
  }
  EXPECT_EQ(messages[3]["id"], 3);
  EXPECT_EQ(peer.finish(), 0);
}

TEST_F(StdioTransportTest, BlankLinesAreIgnored) {
  StdioPeer peer(*server, {});
  peer.send("\n   \n\t\r\n");
  peer.send(line(request(1, "ping")));
  json pong = peer.read_message();
  EXPECT_EQ(pong["id"], 1);
  EXPECT_EQ(pong["result"], json::object());
  EXPECT_EQ(peer.finish(), 0);
  EXPECT_EQ(peer.read_line(100ms), std::nullopt);
}

TEST_F(StdioTransportTest, CrlfLineEndingsAreAccepted) {
  StdioPeer peer(*server, {});
  peer.send(request(1, "ping").dump() + "\r\n");
  EXPECT_EQ(peer.read_message()["result"], json::object());
  EXPECT_EQ(peer.finish(), 0);
}

TEST_F(StdioTransportTest, OversizedLineIsAnsweredWithAnErrorAndTheNextMessageWorks) {
  StdioOptions options;
  options.max_message_bytes = 64;
  StdioPeer peer(*server, options);
  peer.send(line(request(1, "ping", {{"padding", std::string(500, 'x')}})));
  json refusal = peer.read_message();
  EXPECT_TRUE(refusal["id"].is_null());
  EXPECT_EQ(refusal["error"]["code"], error_code::kInvalidRequest);
  EXPECT_THAT(refusal["error"]["message"].get<std::string>(), HasSubstr("64 bytes"));
  peer.send(line(request(2, "ping")));
  json pong = peer.read_message();
  EXPECT_EQ(pong["id"], 2);
  EXPECT_EQ(pong["result"], json::object());
  EXPECT_EQ(peer.finish(), 0);
}

TEST_F(StdioTransportTest, MalformedJsonIsAParseErrorAndTheNextMessageWorks) {
  StdioPeer peer(*server, {});
  peer.send("{\"jsonrpc\": \"2.0\", oops\n");
  json refusal = peer.read_message();
  EXPECT_TRUE(refusal["id"].is_null());
  EXPECT_EQ(refusal["error"]["code"], error_code::kParseError);
  peer.send(line(request(2, "ping")));
  EXPECT_EQ(peer.read_message()["id"], 2);
  EXPECT_EQ(peer.finish(), 0);
}

TEST_F(StdioTransportTest, EndOfFileEndsServeStdioWithZero) {
  StdioPeer peer(*server, {});
  EXPECT_EQ(peer.finish(), 0);
}

TEST_F(StdioTransportTest, EndOfFileDuringACallWritesItsAnswerBeforeExiting) {
  // A script may pipe its requests and close stdin at once; its answers must not be lost.
  StdioPeer peer(*server, {});
  peer.send(kInitialize + kInitialized);
  peer.read_message();
  peer.send(line(request(1, "tools/call", {{"name", "slow"}, {"arguments", {{"max_ms", 300}}}})));
  ASSERT_TRUE(probe->wait_started());
  EXPECT_EQ(peer.finish(5s), 0);
  EXPECT_TRUE(probe->is_finished());
  json answer = peer.read_message();
  EXPECT_EQ(answer["id"], 1);
  EXPECT_TRUE(answer.contains("result")) << answer.dump();
}

TEST_F(StdioTransportTest, LastLineWithoutNewlineIsServed) {
  std::FILE* in = std::tmpfile();
  std::FILE* out = std::tmpfile();
  ASSERT_TRUE(in && out);
  std::string text = request(1, "ping").dump();  // no trailing newline
  std::fwrite(text.data(), 1, text.size(), in);
  std::rewind(in);
  EXPECT_EQ(serve_stdio(*server, in, out, {}), 0);
  std::rewind(out);
  char buffer[512] = {};
  ASSERT_NE(std::fgets(buffer, sizeof buffer, out), nullptr);
  EXPECT_EQ(json::parse(buffer)["id"], 1);
  std::fclose(in);
  std::fclose(out);
}

TEST_F(StdioTransportTest, RecorderWritesJsonlLinesForInAndOut) {
  testing::TempDir dir;
  auto recorder = Recorder::open(dir / "session.jsonl");
  ASSERT_TRUE(recorder.ok());
  StdioOptions options;
  options.recorder = recorder->get();
  {
    StdioPeer peer(*server, options);
    peer.send(line(request(1, "ping")));
    peer.read_message();
    peer.send("not json\n");
    peer.read_message();
    EXPECT_EQ(peer.finish(), 0);
  }
  auto lines = testing::read_lines(dir / "session.jsonl");
  ASSERT_EQ(lines.size(), 4u);
  std::vector<json> records;
  for (const auto& text : lines) {
    json record = json::parse(text, nullptr, false);
    ASSERT_FALSE(record.is_discarded()) << text;
    EXPECT_TRUE(record.contains("ts"));
    records.push_back(record);
  }
  EXPECT_EQ(records[0]["dir"], "in");
  EXPECT_EQ(records[0]["message"], request(1, "ping"));
  EXPECT_EQ(records[1]["dir"], "out");
  EXPECT_EQ(records[1]["message"]["id"], 1);
  EXPECT_EQ(records[2]["dir"], "in");
  EXPECT_EQ(records[2]["message"], json({{"raw", "not json"}}));
  EXPECT_EQ(records[3]["dir"], "out");
  EXPECT_EQ(records[3]["message"]["error"]["code"], error_code::kParseError);
}

TEST_F(StdioTransportTest, StatelessDiscoverAndToolCallNeedNoInitialize) {
  StdioPeer peer(*server, {});
  json meta{{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
            {"io.modelcontextprotocol/clientCapabilities", json::object()}};
  peer.send(line(request(1, "server/discover", {{"_meta", meta}})));
  json discover = peer.read_message();
  EXPECT_EQ(discover["result"]["supportedVersions"], json::array({"2026-07-28"}));
  peer.send(line(request(2, "tools/call",
                         {{"name", "echo"}, {"arguments", {{"text", "hi"}}}, {"_meta", meta}})));
  json call = peer.read_message();
  EXPECT_EQ(call["id"], 2);
  EXPECT_EQ(call["result"]["resultType"], "complete");
  EXPECT_EQ(call["result"]["structuredContent"]["text"], "hi");
}

}  // namespace
}  // namespace kiln::mcp
