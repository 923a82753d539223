// The `kiln` binary from the outside: arguments, exit codes, what goes to
// stdout and stderr, and a stdio MCP session through a pipe.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace kiln::cli {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

// A running `kiln` with pipes on stdin, stdout and stderr.
class Child {
 public:
  explicit Child(const std::vector<std::string>& args) {
    signal(SIGPIPE, SIG_IGN);  // a child that exits early must not kill the test
    int in[2];
    int out[2];
    int err[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
      throw std::runtime_error("pipe2 failed");
    std::vector<std::string> argv_storage = {KILN_BIN};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& arg : argv_storage) argv.push_back(arg.data());
    argv.push_back(nullptr);

    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      dup2(err[1], 2);
      unsetenv("KILN_TASKS_DIR");  // the bundled tasks of the source tree
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    close(err[1]);
    stdin_ = in[1];
    stdout_ = out[0];
    stderr_ = err[0];
    fcntl(stdin_, F_SETFL, O_NONBLOCK);
  }
  ~Child() {
    close_stdin();
    if (stdout_ >= 0) close(stdout_);
    if (stderr_ >= 0) close(stderr_);
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  void close_stdin() {
    if (stdin_ >= 0) close(stdin_);
    stdin_ = -1;
  }

  // Moves data until `done` holds, both outputs end, or the deadline passes
  // (then false). Writes `input_` as the child takes it, then closes stdin.
  template <typename Done>
  bool pump(std::chrono::steady_clock::time_point deadline, Done done) {
    while (!done()) {
      if (stdout_ < 0 && stderr_ < 0) return true;
      std::vector<pollfd> fds;
      if (stdout_ >= 0) fds.push_back({stdout_, POLLIN, 0});
      if (stderr_ >= 0) fds.push_back({stderr_, POLLIN, 0});
      if (stdin_ >= 0 && !input_.empty()) fds.push_back({stdin_, POLLOUT, 0});
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) return false;
      if (poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0) return false;
      for (const auto& fd : fds) {
        if (!fd.revents) continue;
        if (fd.fd == stdin_) {
          ssize_t n = write(stdin_, input_.data(), input_.size());
          if (n > 0) input_.erase(0, static_cast<size_t>(n));
          if (n < 0 || input_.empty()) {
            input_.clear();
            if (close_after_input_) close_stdin();
          }
          continue;
        }
        char chunk[4096];
        ssize_t n = read(fd.fd, chunk, sizeof chunk);
        std::string& sink = fd.fd == stdout_ ? out_ : err_;
        if (n > 0) {
          sink.append(chunk, static_cast<size_t>(n));
        } else {
          close(fd.fd);
          (fd.fd == stdout_ ? stdout_ : stderr_) = -1;
        }
      }
    }
    return true;
  }

  void feed(std::string input, bool then_close) {
    input_ = std::move(input);
    close_after_input_ = then_close;
    if (input_.empty() && then_close) close_stdin();
  }

  // Waits for the exit; nullopt (after killing it) when it outlives `timeout`.
  std::optional<int> wait(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    bool drained = pump(deadline, [] { return false; });
    for (;;) {
      int status = 0;
      pid_t got = waitpid(pid_, &status, WNOHANG);
      if (got == pid_) {
        reaped_ = true;
        if (!drained) return std::nullopt;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
        reaped_ = true;
        return std::nullopt;
      }
      std::this_thread::sleep_for(5ms);
    }
  }

  pid_t pid() const { return pid_; }
  const std::string& out() const { return out_; }
  const std::string& err() const { return err_; }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int stdin_ = -1;
  int stdout_ = -1;
  int stderr_ = -1;
  std::string input_;
  bool close_after_input_ = true;
  std::string out_;
  std::string err_;
};

struct Outcome {
  int code = -1;  // -1: killed after the timeout
  std::string out;
  std::string err;
};

Outcome run_kiln(const std::vector<std::string>& args, const std::string& input = "",
                 std::chrono::milliseconds timeout = 30s) {
  Child child(args);
  child.feed(input, /*then_close=*/true);
  auto code = child.wait(timeout);
  EXPECT_TRUE(code.has_value()) << "kiln did not exit within " << timeout.count() << " ms";
  return Outcome{code.value_or(-1), child.out(), child.err()};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string message(const json& id, const std::string& method, json params = json::object()) {
  json out{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
  if (!id.is_null()) out["id"] = id;
  return out.dump() + "\n";
}

const std::string kHandshake = message(1, "initialize",
                                       {{"protocolVersion", "2025-06-18"},
                                        {"capabilities", json::object()},
                                        {"clientInfo", {{"name", "cli-test"}, {"version", "1"}}}}) +
                               message(nullptr, "notifications/initialized");

TEST(KilnBinary, VersionPrintsTheVersion) {
  Outcome run = run_kiln({"--version"});
  EXPECT_EQ(run.code, 0);
  EXPECT_EQ(run.out, std::string(KILN_VERSION_STRING) + "\n");
}

TEST(KilnBinary, HelpListsTheSubcommands) {
  Outcome run = run_kiln({"--help"});
  EXPECT_EQ(run.code, 0);
  EXPECT_THAT(run.out, HasSubstr("Usage"));
  for (const char* name : {"mcp", "call", "tasks"}) EXPECT_THAT(run.out, HasSubstr(name));
}

TEST(KilnBinary, EachSubcommandHasHelp) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"mcp", "--help"}, "--http"},
      {{"call", "--help"}, "--json"},
      {{"tasks", "--help"}, "list"},
      {{"tasks", "list", "--help"}, "task bundles"},
  };
  for (const auto& [args, expected] : cases) {
    Outcome run = run_kiln(args);
    EXPECT_EQ(run.code, 0) << args[0];
    EXPECT_THAT(run.out, HasSubstr("Usage")) << args[0];
    EXPECT_THAT(run.out, HasSubstr(expected)) << args[0];
  }
}

TEST(KilnBinary, NoSubcommandIsAnError) {
  Outcome run = run_kiln({});
  EXPECT_NE(run.code, 0);
  EXPECT_FALSE(run.err.empty());
}

TEST(KilnCall, GetTaskPrintsTheContract) {
  Outcome run = run_kiln({"call", "get_task"});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("fp16_gemm"));
  EXPECT_THAT(run.out, HasSubstr("workloads"));
  EXPECT_THAT(run.out, HasSubstr("tolerance"));
}

TEST(KilnCall, StructuredPrintsJson) {
  Outcome run = run_kiln({"call", "get_task", "--structured"});
  EXPECT_EQ(run.code, 0) << run.err;
  json contract = json::parse(run.out, nullptr, false);
  ASSERT_FALSE(contract.is_discarded()) << run.out;
  EXPECT_EQ(contract["name"], "fp16_gemm");
}

TEST(KilnCall, UnknownToolExitsNonZeroNamingTheTools) {
  Outcome run = run_kiln({"call", "nope"});
  EXPECT_NE(run.code, 0);
  EXPECT_THAT(run.err, HasSubstr("nope"));
  EXPECT_THAT(run.err, HasSubstr("get_task")) << "the message should list the tools";
  EXPECT_TRUE(run.out.empty());
}

TEST(KilnCall, UnknownTaskExitsOneListingTheTasks) {
  Outcome run = run_kiln({"call", "get_task", "--json", R"({"name":"missing"})"});
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.err, HasSubstr("missing"));
  EXPECT_THAT(run.err, HasSubstr("fp16_gemm"));
}

TEST(KilnCall, InvalidArgumentsExitOneNamingTheArgument) {
  Outcome run = run_kiln({"call", "get_task", "--json", R"({"name": 5})"});
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.err, HasSubstr("argument `name`"));
}

TEST(KilnCall, JsonThatIsNotJsonExitsTwo) {
  Outcome run = run_kiln({"call", "get_task", "--json", "not json"});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("--json"));
}

TEST(KilnCall, JsonThatIsNotAnObjectExitsTwo) {
  Outcome run = run_kiln({"call", "get_task", "--json", "[1, 2]"});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("JSON object"));
}

TEST(KilnTasks, ListListsFp16Gemm) {
  Outcome run = run_kiln({"tasks", "list"});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("fp16_gemm"));
  EXPECT_THAT(run.out, HasSubstr("sha256:"));
}

TEST(KilnTasks, EmptyTasksDirIsAnError) {
  std::string dir = (std::filesystem::temp_directory_path() / "kiln_cli_test_XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  Outcome run = run_kiln({"--tasks-dir", dir, "tasks", "list"});
  std::filesystem::remove_all(dir);
  EXPECT_EQ(run.code, 1);
  EXPECT_THAT(run.err, HasSubstr("no task bundles"));
}

TEST(KilnMcp, NonLoopbackHttpWithoutTokenFailsBeforeListening) {
  // 10.0.0.1 is refused before any socket is opened; nothing is sent anywhere.
  Outcome run = run_kiln({"mcp", "--http", "10.0.0.1:9"}, "", 15s);
  EXPECT_NE(run.code, 0);
  EXPECT_NE(run.code, -1);
  EXPECT_THAT(run.err, HasSubstr("token"));
  EXPECT_THAT(run.err, Not(HasSubstr("listening")));
}

TEST(KilnMcp, MalformedHttpAddressIsAnError) {
  Outcome run = run_kiln({"mcp", "--http", "localhost"}, "", 15s);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("HOST:PORT"));
}

TEST(KilnMcp, HttpOnLoopbackAnnouncesItsPortAndStopsOnSigterm) {
  Child child({"mcp", "--http", "127.0.0.1:0"});
  child.feed("", /*then_close=*/true);
  const std::regex ready(R"(listening on http://127\.0\.0\.1:(\d+)/mcp)");
  std::smatch match;
  bool announced = child.pump(std::chrono::steady_clock::now() + 15s,
                              [&] { return std::regex_search(child.err(), match, ready); });
  ASSERT_TRUE(announced && !match.empty()) << child.err();
  EXPECT_GT(std::stoi(match[1].str()), 0);
  std::this_thread::sleep_for(200ms);  // let it reach serve()
  kill(child.pid(), SIGTERM);
  auto code = child.wait(10s);
  ASSERT_TRUE(code.has_value()) << "kiln mcp --http did not stop on SIGTERM";
  EXPECT_EQ(*code, 0) << child.err();
  EXPECT_TRUE(child.out().empty()) << child.out();
}

TEST(KilnMcp, StdioSessionAnswersInitializeAndToolsListWithJsonLinesOnly) {
  Outcome run = run_kiln({"mcp"}, kHandshake + message(2, "tools/list"));
  EXPECT_EQ(run.code, 0) << run.err;
  std::vector<std::string> lines = lines_of(run.out);
  ASSERT_EQ(lines.size(), 2u) << run.out;
  std::vector<json> messages;
  for (const auto& line : lines) {
    json parsed = json::parse(line, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << "stdout carried a line that is not JSON: " << line;
    EXPECT_EQ(parsed["jsonrpc"], "2.0");
    messages.push_back(parsed);
  }
  EXPECT_EQ(messages[0]["id"], 1);
  EXPECT_EQ(messages[0]["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(messages[0]["result"]["serverInfo"]["name"], "kiln");
  EXPECT_EQ(messages[1]["id"], 2);
  std::vector<std::string> names;
  for (const auto& tool : messages[1]["result"]["tools"]) names.push_back(tool["name"]);
  EXPECT_THAT(names, ::testing::Contains("get_task"));
  EXPECT_THAT(names, Not(::testing::Contains("test_wait"))) << "test tools need --test-tools";
}

TEST(KilnMcp, StdioMalformedLineIsAnsweredAndTheSessionGoesOn) {
  Outcome run = run_kiln({"mcp"}, "this is not json\n" + message(7, "ping"));
  EXPECT_EQ(run.code, 0);
  std::vector<std::string> lines = lines_of(run.out);
  ASSERT_EQ(lines.size(), 2u) << run.out;
  EXPECT_EQ(json::parse(lines[0])["error"]["code"], -32700);
  EXPECT_EQ(json::parse(lines[1])["id"], 7);
}

TEST(KilnMcp, TestToolsAreOfferedOnlyWithTheFlag) {
  Outcome run = run_kiln({"mcp", "--test-tools"}, kHandshake + message(2, "tools/list"));
  EXPECT_EQ(run.code, 0) << run.err;
  std::vector<std::string> lines = lines_of(run.out);
  ASSERT_EQ(lines.size(), 2u) << run.out;
  EXPECT_THAT(lines[1], HasSubstr("\"test_wait\""));
}

TEST(KilnMcp, RecordWritesTheSessionAsJsonl) {
  std::string dir = (std::filesystem::temp_directory_path() / "kiln_cli_test_XXXXXX").string();
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::string record = dir + "/session.jsonl";
  Outcome run = run_kiln({"mcp", "--record", record}, kHandshake + message(2, "ping"));
  EXPECT_EQ(run.code, 0) << run.err;
  std::ifstream in(record);
  std::vector<json> records;
  for (std::string line; std::getline(in, line);)
    records.push_back(json::parse(line, nullptr, false));
  std::filesystem::remove_all(dir);
  ASSERT_EQ(records.size(), 5u);  // initialize, initialized, ping in; two responses out
  int ins = 0;
  int outs = 0;
  for (const auto& r : records) {
    ASSERT_FALSE(r.is_discarded());
    EXPECT_TRUE(r.contains("ts"));
    (r["dir"] == "in" ? ins : outs)++;
  }
  EXPECT_EQ(ins, 3);
  EXPECT_EQ(outs, 2);
}

}  // namespace
}  // namespace kiln::cli
