// run_worker on small shell scripts: lines, exit codes, signals, deadlines, cancel,
// rejected output, and children left behind.
#include "kiln/runner/worker_process.h"

#include <gmock/gmock.h>

#include <thread>

#include "runner_fixture.h"

namespace kiln::runner {
namespace {

using namespace kiln::runner::testing;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct ScriptRun {
  WorkerExit exit;
  std::vector<std::string> lines;
};

ScriptRun run_script(const std::string& script, std::chrono::milliseconds limit = 10s,
                     const std::atomic<bool>* cancel = nullptr,
                     std::function<bool(std::string_view)> accept = {},
                     const std::filesystem::path& log = {}) {
  static const std::atomic<bool> never{false};
  ScriptRun run;
  WorkerCommand command{"/bin/sh", {"-c", script}, std::filesystem::temp_directory_path(), log};
  run.exit = run_worker(command, std::chrono::steady_clock::now() + limit, cancel ? *cancel : never,
                        [&](std::string_view line) {
                          run.lines.emplace_back(line);
                          return accept ? accept(line) : true;
                        });
  return run;
}

TEST(WorkerProcess, HandsOnEveryLineAndTheExitCode) {
  ScriptRun run = run_script("echo one; printf 'two\\r\\nthree'; exit 4");
  EXPECT_EQ(run.exit.how, WorkerExit::How::kExited);
  EXPECT_EQ(run.exit.exit_code, 4);
  EXPECT_THAT(run.lines, ElementsAre("one", "two", "three"));
}

TEST(WorkerProcess, KeepsTheTailOfStderrAndLogsIt) {
  TempDir dir;
  ScriptRun run = run_script("echo to-stderr >&2; exit 0", 10s, nullptr, {}, dir / "worker.log");
  EXPECT_THAT(run.exit.stderr_tail, HasSubstr("to-stderr"));
  EXPECT_THAT(read_text(dir / "worker.log"), HasSubstr("to-stderr"));
}

TEST(WorkerProcess, ReportsTheSignalOfACrash) {
  ScriptRun run = run_script("kill -SEGV $$");
  EXPECT_EQ(run.exit.how, WorkerExit::How::kSignaled);
  EXPECT_EQ(run.exit.signal, 11);
  EXPECT_EQ(signal_name(run.exit.signal), "SIGSEGV");
}

TEST(WorkerProcess, KillsAWorkerPastItsDeadline) {
  auto start = std::chrono::steady_clock::now();
  ScriptRun run = run_script("echo started; sleep 30", 300ms);
  EXPECT_EQ(run.exit.how, WorkerExit::How::kTimedOut);
  EXPECT_THAT(run.lines, ElementsAre("started"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(WorkerProcess, KillsTheWholeProcessGroupOnCancel) {
  TempDir dir;
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    eventually([&] { return !read_text(dir / "child.pid").empty(); });
    cancel = true;
  });
  ScriptRun run =
      run_script("sleep 30 & echo $! > " + (dir / "child.pid").string() + "; wait", 20s, &cancel);
  canceller.join();
  EXPECT_EQ(run.exit.how, WorkerExit::How::kCancelled);
  pid_t child = std::stoi(read_text(dir / "child.pid"));
  EXPECT_TRUE(eventually([&] { return process_gone(child); }));
}

TEST(WorkerProcess, CleansUpChildrenAWorkerLeavesBehind) {
  TempDir dir;
  auto start = std::chrono::steady_clock::now();
  ScriptRun run =
      run_script("sleep 30 & echo $! > " + (dir / "child.pid").string() + "; echo done");
  EXPECT_EQ(run.exit.how, WorkerExit::How::kExited);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);  // its child held stdout open
  pid_t child = std::stoi(read_text(dir / "child.pid"));
  EXPECT_TRUE(eventually([&] { return process_gone(child); }));
}

TEST(WorkerProcess, StopsAWorkerWhoseOutputIsRejected) {
  ScriptRun run = run_script("echo good; echo bad; sleep 30", 20s, nullptr,
                             [](std::string_view line) { return line != "bad"; });
  EXPECT_EQ(run.exit.how, WorkerExit::How::kOutputRejected);
  EXPECT_THAT(run.lines, ElementsAre("good", "bad"));
}

TEST(WorkerProcess, RejectsALineThatNeverEnds) {
  static const std::atomic<bool> never{false};
  WorkerCommand command{
      "/bin/sh", {"-c", "head -c 100000 /dev/zero | tr '\\0' x; sleep 30"}, "/", {}};
  WorkerExit exit = run_worker(
      command, std::chrono::steady_clock::now() + 20s, never, [](std::string_view) { return true; },
      4096);
  EXPECT_EQ(exit.how, WorkerExit::How::kOutputRejected);
  EXPECT_THAT(exit.output_problem, HasSubstr("longer than 4096"));
}

TEST(WorkerProcess, AMissingExecutableIsASpawnFailure) {
  static const std::atomic<bool> never{false};
  WorkerCommand command{"/no/such/kiln-worker", {}, "/", {}};
  WorkerExit exit = run_worker(command, std::chrono::steady_clock::now() + 1s, never,
                               [](std::string_view) { return true; });
  EXPECT_EQ(exit.how, WorkerExit::How::kSpawnFailed);
  EXPECT_THAT(exit.spawn_error, HasSubstr("/no/such/kiln-worker"));
  WorkerCommand bad_dir{"/bin/sh", {"-c", "true"}, "/no/such/dir", {}};
  exit = run_worker(bad_dir, std::chrono::steady_clock::now() + 1s, never,
                    [](std::string_view) { return true; });
  EXPECT_EQ(exit.how, WorkerExit::How::kSpawnFailed);
}

TEST(WorkerProcess, TheWorkerInheritsOnlyStandardDescriptors) {
  // A descriptor of this process (not close-on-exec) must not leak into the worker.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ScriptRun run = run_script("ls /proc/self/fd | wc -l");
  close(fds[0]);
  close(fds[1]);
  ASSERT_EQ(run.lines.size(), 1u);
  // 0, 1, 2 and the descriptor ls uses to read the folder.
  EXPECT_LE(std::stoi(run.lines[0]), 4);
}

}  // namespace
}  // namespace kiln::runner
