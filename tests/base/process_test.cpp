// run_supervised on small shell scripts: output, exit codes, signals, limits, refusal,
// spawn failures, and what the child is given (directory, environment, descriptors).
#include "kiln/base/process.h"

#include <gmock/gmock.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace kiln {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

struct Outcome {
  ProcessExit exit;
  std::string out;
  std::string err;
};

ProcessSpec command(std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  return spec;
}

ProcessSpec shell(const std::string& script) { return command({"/bin/sh", "-c", script}); }

ProcessLimits within(Clock::duration limit, const std::atomic<bool>* cancel = nullptr) {
  ProcessLimits limits;
  limits.deadline = Clock::now() + limit;
  limits.cancel = cancel;
  return limits;
}

Outcome run(const ProcessSpec& spec, const ProcessLimits& limits = {},
            std::function<bool(std::string_view)> accept = {}) {
  Outcome result;
  ProcessOutput output{[&](std::string_view chunk) {
                         result.out.append(chunk);
                         return accept ? accept(chunk) : true;
                       },
                       [&](std::string_view chunk) { result.err.append(chunk); }};
  result.exit = run_supervised(spec, limits, output);
  return result;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln-process-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Gone, or a zombie (dead; whoever inherited it has not reaped it yet), within 5 s.
bool process_gone(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    if (kill(pid, 0) != 0) return true;
    const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos || (close + 2 < stat.size() && stat[close + 2] == 'Z'))
      return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// The SigBlk or SigIgn mask of a /proc/PID/status text.
uint64_t signal_mask(const std::string& status, const std::string& field) {
  const size_t at = status.find(field + ":\t");
  if (at == std::string::npos) return ~uint64_t{0};
  return std::stoull(status.substr(at + field.size() + 2), nullptr, 16);
}

pid_t wait_for_pid(const std::filesystem::path& file) {
  for (int i = 0; i < 500; ++i) {
    const std::string text = read_text(file);
    if (!text.empty() && text.back() == '\n') return std::stoi(text);
    std::this_thread::sleep_for(10ms);
  }
  return -1;
}

TEST(Process, CapturesStdoutAndStderrApartAndTheExitCode) {
  Outcome r = run(shell("echo out; echo err >&2; exit 3"));
  EXPECT_EQ(r.exit.how, ProcessExit::How::kExited);
  EXPECT_EQ(r.exit.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_GT(r.exit.elapsed.count(), 0);
}

TEST(Process, MergesStderrIntoStdoutWhenAsked) {
  ProcessSpec spec = shell("echo out; echo err >&2");
  spec.merge_stderr = true;
  Outcome r = run(spec);
  EXPECT_EQ(r.exit.how, ProcessExit::How::kExited);
  EXPECT_EQ(r.out, "out\nerr\n");
  EXPECT_EQ(r.err, "");
}

TEST(Process, ReportsTheSignalThatKilledIt) {
  Outcome r = run(shell("kill -SEGV $$"));
  EXPECT_EQ(r.exit.how, ProcessExit::How::kSignaled);
  EXPECT_EQ(r.exit.signal, SIGSEGV);
  EXPECT_EQ(signal_name(r.exit.signal), "SIGSEGV");
  EXPECT_EQ(signal_name(77), "signal 77");
}

TEST(Process, KillsTheWholeGroupAtTheDeadline) {
  TempDir dir;
  const auto start = Clock::now();
  Outcome r =
      run(shell("sh -c 'sleep 30 & echo $! > " + (dir / "grandchild").string() + "; wait' & wait"),
          within(500ms));
  EXPECT_EQ(r.exit.how, ProcessExit::How::kTimedOut);
  EXPECT_LT(Clock::now() - start, 5s);
  const pid_t grandchild = wait_for_pid(dir / "grandchild");
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(process_gone(grandchild));
}

TEST(Process, KillsTheGroupOnCancel) {
  TempDir dir;
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    wait_for_pid(dir / "child");
    cancel = true;
  });
  Outcome r = run(shell("sleep 30 & echo $! > " + (dir / "child").string() + "; wait"),
                  within(20s, &cancel));
  canceller.join();
  EXPECT_EQ(r.exit.how, ProcessExit::How::kCancelled);
  EXPECT_TRUE(process_gone(wait_for_pid(dir / "child")));
}

TEST(Process, KillsWhatTheLeaderLeavesBehind) {
  TempDir dir;
  const auto start = Clock::now();
  Outcome r = run(shell("sleep 30 & echo $! > " + (dir / "child").string() + "; echo done"));
  EXPECT_EQ(r.exit.how, ProcessExit::How::kExited);
  EXPECT_EQ(r.out, "done\n");
  EXPECT_LT(Clock::now() - start, 5s);  // the child held stdout open
  EXPECT_TRUE(process_gone(wait_for_pid(dir / "child")));
}

TEST(Process, StopsWhenTheStdoutConsumerRefuses) {
  const auto start = Clock::now();
  Outcome r =
      run(shell("echo good; sleep 0.2; echo bad; sleep 30"), within(20s),
          [](std::string_view chunk) { return chunk.find("bad") == std::string_view::npos; });
  EXPECT_EQ(r.exit.how, ProcessExit::How::kRefused);
  EXPECT_EQ(r.out, "good\nbad\n");
  EXPECT_LT(Clock::now() - start, 5s);
}

TEST(Process, EndsTheStdoutStreamWithAnEmptyChunkThatMayStillRefuse) {
  std::vector<std::string> chunks;
  ProcessOutput output;
  output.on_stdout = [&](std::string_view chunk) {
    chunks.emplace_back(chunk);
    return !chunk.empty();
  };
  ProcessExit exit = run_supervised(shell("printf partial"), {}, output);
  EXPECT_EQ(exit.how, ProcessExit::How::kRefused);
  ASSERT_FALSE(chunks.empty());
  EXPECT_EQ(chunks.back(), "");
}

TEST(Process, AMissingProgramIsASpawnFailureWithItsErrno) {
  Outcome r = run(command({"/no/such/program"}));
  EXPECT_EQ(r.exit.how, ProcessExit::How::kSpawnFailed);
  EXPECT_EQ(r.exit.spawn_errno, ENOENT);
  EXPECT_THAT(r.exit.spawn_error, HasSubstr("/no/such/program"));
  EXPECT_THAT(r.exit.spawn_error, HasSubstr(std::strerror(ENOENT)));

  EXPECT_EQ(run(command({"/dev/null"})).exit.spawn_errno, EACCES);
  EXPECT_EQ(run({}).exit.how, ProcessExit::How::kSpawnFailed);
}

TEST(Process, LooksUpABareNameInPathOnlyWhenAsked) {
  ProcessSpec spec = command({"sh", "-c", "echo found"});
  spec.search_path = true;
  Outcome found = run(spec);
  EXPECT_EQ(found.exit.how, ProcessExit::How::kExited);
  EXPECT_EQ(found.out, "found\n");

  spec.extra_env["PATH"] = "/no/such/dir";
  Outcome missing = run(spec);
  EXPECT_EQ(missing.exit.how, ProcessExit::How::kSpawnFailed);
  EXPECT_THAT(missing.exit.spawn_error, HasSubstr("PATH"));

  spec.search_path = false;
  spec.extra_env.clear();
  EXPECT_EQ(run(spec).exit.spawn_errno, ENOENT);  // no "sh" in this test's folder
}

TEST(Process, StartsInTheWorkingDirectory) {
  TempDir dir;
  ProcessSpec spec = shell("pwd");
  spec.working_dir = dir.path();
  Outcome r = run(spec);
  EXPECT_EQ(r.out, std::filesystem::canonical(dir.path()).string() + "\n");

  spec.working_dir = "/no/such/dir";
  Outcome missing = run(spec);
  EXPECT_EQ(missing.exit.how, ProcessExit::How::kSpawnFailed);
  EXPECT_EQ(missing.exit.spawn_errno, ENOENT);
  EXPECT_THAT(missing.exit.spawn_error, HasSubstr("/no/such/dir"));
}

TEST(Process, AddsAndReplacesEnvironmentVariables) {
  ProcessSpec spec = shell("echo \"$KILN_PROCESS_TEST_A,$HOME\"");
  spec.extra_env = {{"KILN_PROCESS_TEST_A", "42"}, {"HOME", "/replaced"}};
  EXPECT_EQ(run(spec).out, "42,/replaced\n");
}

TEST(Process, WritesStdoutToAFile) {
  TempDir dir;
  ProcessSpec spec = shell("echo to-file; echo to-pipe >&2");
  spec.stdout_file = dir / "stdout.txt";
  Outcome r = run(spec);
  EXPECT_EQ(r.exit.how, ProcessExit::How::kExited);
  EXPECT_EQ(read_text(dir / "stdout.txt"), "to-file\n");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "to-pipe\n");

  spec.merge_stderr = true;
  r = run(spec);
  EXPECT_EQ(read_text(dir / "stdout.txt"), "to-file\nto-pipe\n");  // truncated first
  EXPECT_EQ(r.err, "");

  spec.stdout_file = "/no/such/dir/stdout.txt";
  EXPECT_EQ(run(spec).exit.how, ProcessExit::How::kSpawnFailed);
}

TEST(Process, TheChildInheritsOnlyTheStandardDescriptors) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);  // not close-on-exec: must not reach the child anyway
  Outcome r = run(shell("ls /proc/self/fd"));
  close(fds[0]);
  close(fds[1]);
  // 0, 1, 2 and the one ls reads the folder with.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 4) << r.out;
  EXPECT_EQ(run(shell("head -c 1")).out, "");  // stdin is /dev/null
}

TEST(Process, TheChildStartsWithDefaultSignalsAndNoneBlocked) {
  sigset_t blocked, previous;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &blocked, &previous);
  struct sigaction ignore {
  }, old_pipe{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);
  Outcome r = run(command({"/bin/cat", "/proc/self/status"}));
  sigaction(SIGPIPE, &old_pipe, nullptr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  EXPECT_EQ(signal_mask(r.out, "SigBlk"), 0u);
  EXPECT_EQ(signal_mask(r.out, "SigIgn") & (uint64_t{1} << (SIGPIPE - 1)), 0u);
}

TEST(Process, ManyAtOnceFromManyThreads) {
  std::vector<std::thread> threads;
  std::atomic<int> right{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      Outcome r = run(shell("echo " + std::to_string(i)));
      if (r.exit.how == ProcessExit::How::kExited && r.out == std::to_string(i) + "\n") ++right;
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(right, 8);
}

}  // namespace
}  // namespace kiln
