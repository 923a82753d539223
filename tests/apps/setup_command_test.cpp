// `kiln setup` and what uses the run it makes, from the outside: the run directory, refusals
// (an existing run, a runner that does not answer), the freeze of `kiln mcp --run-dir`, per-
// session recordings, `kiln frontier show` and `kiln report` on a new run. No test reaches the
// network: the unreachable runner is a loopback port nothing listens on.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner_fixture.h"
#include "support/run_program.h"
#include "support/temp_dir.h"

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using kiln::testing::read_text;
using kiln::testing::TempDir;
using kiln::testing::write_text;
using ::testing::HasSubstr;
using ::testing::Not;

using kiln::testing::Ran;

Ran run(std::vector<std::string> argv, const fs::path& cwd = {}) {
  return kiln::testing::run_program(std::move(argv),
                                    {cwd, {{"KILN_RUNNER", ""}, {"KILN_TASKS_DIR", ""}}});
}

Ran kiln(const std::vector<std::string>& args, const fs::path& cwd = {}) {
  std::vector<std::string> argv = {KILN_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, cwd);
}

// A copy of the bundled tasks, so a test may change one.
fs::path copy_tasks(const fs::path& to) {
  fs::copy(KILN_TASKS_DIR, to, fs::copy_options::recursive);
  return to;
}

// A loopback port that nothing listens on (bound, then closed).
int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  int port = ntohs(address.sin_port);
  close(fd);
  return port;
}

class SetupTest : public ::testing::Test {
 protected:
  Ran setup(const std::vector<std::string>& more = {}) {
    std::vector<std::string> args = {
        "--tasks-dir", tasks_.string(),      "setup",  "--task", "fp16_gemm",
        "--out",       dir_.path().string(), "--name", "r1"};
    args.insert(args.end(), more.begin(), more.end());
    return kiln(args);
  }
  TempDir dir_;
  fs::path tasks_ = copy_tasks(dir_ / "tasks");
  fs::path run_ = dir_ / "r1";
};

TEST_F(SetupTest, MakesARunDirectoryAndSaysWhatToDoNext) {
  Ran ran = setup();
  ASSERT_EQ(ran.code, 0) << ran.err;
  // The manifest: task and hashes, kiln, no runner, the default budget, the tools.
  json manifest = json::parse(read_text(run_ / "manifest.json"));
  EXPECT_EQ(manifest["run_id"], "r1");
  EXPECT_EQ(manifest["task"]["name"], "fp16_gemm");
  EXPECT_EQ(manifest["task"]["sha256"].get<std::string>().size(), 64u);
  EXPECT_TRUE(manifest["task"]["files"].contains("reference.cpp"));
  EXPECT_EQ(manifest["kiln"]["version"], KILN_VERSION_STRING);
  EXPECT_EQ(manifest["runners"], json::array());
  EXPECT_DOUBLE_EQ(manifest["budget"]["promotion_margin"].get<double>(), 0.01);
  EXPECT_THAT(manifest["tools"].dump(), HasSubstr("record_candidate"));
  // PROMPT.md: the contract and the rules.
  const std::string prompt = read_text(run_ / "PROMPT.md");
  EXPECT_THAT(prompt, HasSubstr("Scoring commands can pass a subset; a candidate counts only "
                                "when every workload passes"));
  EXPECT_THAT(prompt, HasSubstr("4096x4096x4096"));
  EXPECT_THAT(prompt, HasSubstr("cuBLAS"));
  EXPECT_THAT(prompt, HasSubstr("worktree/candidates/fp16_gemm/scratch/"));
  EXPECT_THAT(prompt, HasSubstr("record_candidate"));
  EXPECT_THAT(prompt, HasSubstr("Only the CPU tools work"));
  // The agents' configurations start kiln on this run and record every session.
  json mcp = json::parse(read_text(run_ / ".mcp.json"));
  const json& server = mcp["mcpServers"]["kiln"];
  EXPECT_EQ(server["command"], KILN_BIN);
  EXPECT_EQ(server["args"], json({"mcp", "--run-dir", run_.string(), "--record",
                                  (run_ / "sessions").string() + "/"}));
  EXPECT_EQ(read_text(run_ / "worktree" / ".mcp.json"), read_text(run_ / ".mcp.json"));
  const std::string codex = read_text(run_ / ".codex" / "config.toml");
  EXPECT_THAT(codex, HasSubstr("[mcp_servers.kiln]"));
  EXPECT_THAT(codex, HasSubstr("tool_timeout_sec = 1800"));
  EXPECT_THAT(codex, HasSubstr("\"--run-dir\", \"" + run_.string() + "\""));
  // The worktree: the starter in scratch, a frontier folder, one commit, nothing pending.
  EXPECT_EQ(read_text(run_ / "worktree/candidates/fp16_gemm/scratch/kernel.cu"),
            read_text(tasks_ / "fp16_gemm" / "starter.cu"));
  EXPECT_TRUE(fs::is_directory(run_ / "worktree/candidates/fp16_gemm/frontier"));
  Ran log = run({"git", "-C", (run_ / "worktree").string(), "log", "--oneline"});
  ASSERT_EQ(log.code, 0) << log.err;
  EXPECT_THAT(log.out, HasSubstr("run r1: fp16_gemm starter"));
  Ran status = run({"git", "-C", (run_ / "worktree").string(), "status", "--porcelain"});
  EXPECT_EQ(status.out, "");
  // What to do next.
  EXPECT_THAT(ran.out, HasSubstr("only the CPU tools work"));
  EXPECT_THAT(ran.out, HasSubstr("trust the project once: cd " + (run_ / "worktree").string() +
                                 " && claude"));
  EXPECT_THAT(ran.out, HasSubstr("MCP_TOOL_TIMEOUT=1800000 claude"));
  EXPECT_THAT(ran.out, HasSubstr("CODEX_HOME=" + (run_ / ".codex").string() + " codex"));
  EXPECT_THAT(ran.out, HasSubstr("/goal Read ../PROMPT.md"));
}

TEST_F(SetupTest, ABundleOutsideTheTasksFolderIsRecordedByItsPathAndHash) {
  const fs::path elsewhere = dir_ / "my_tasks";
  fs::create_directories(elsewhere);
  fs::copy(tasks_ / "rmsnorm", elsewhere / "my_rms", fs::copy_options::recursive);
  std::string task = read_text(elsewhere / "my_rms" / "task.json");
  task.replace(task.find("\"rmsnorm\""), 9, "\"my_rms\"");
  write_text(elsewhere / "my_rms" / "task.json", task);
  Ran listed = kiln({"--tasks-dir", elsewhere.string(), "tasks", "list"});
  ASSERT_EQ(listed.code, 0) << listed.err;
  const std::string hash12 = listed.out.substr(listed.out.find("sha256:") + 7, 12);

  Ran ran = kiln({"--tasks-dir", tasks_.string(), "setup", "--task",
                  (elsewhere / "my_rms").string(), "--out", dir_.path().string(), "--name", "ext"});
  ASSERT_EQ(ran.code, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("bundle " + (elsewhere / "my_rms").string()));
  json manifest = json::parse(read_text(dir_ / "ext" / "manifest.json"));
  EXPECT_EQ(manifest["task"]["name"], "my_rms");
  EXPECT_EQ(manifest["task"]["dir"], (elsewhere / "my_rms").string());
  EXPECT_EQ(manifest["task"]["sha256"].get<std::string>().substr(0, 12), hash12);
  EXPECT_TRUE(manifest["task"]["files"].contains("starter.cu"));
  EXPECT_EQ(read_text(dir_ / "ext" / "worktree/candidates/my_rms/scratch/kernel.cu"),
            read_text(elsewhere / "my_rms" / "starter.cu"));
}

TEST_F(SetupTest, RefusesToOverwriteAnExistingRun) {
  ASSERT_EQ(setup().code, 0);
  write_text(run_ / "PROMPT.md", "the agent's notes");
  Ran again = setup();
  EXPECT_EQ(again.code, 1);
  EXPECT_THAT(again.err, HasSubstr("already exists"));
  EXPECT_THAT(again.err, HasSubstr("--name"));
  EXPECT_EQ(read_text(run_ / "PROMPT.md"), "the agent's notes");
}

TEST_F(SetupTest, ARunnerThatDoesNotAnswerIsNamedAndNothingIsWritten) {
  const std::string url = "http://127.0.0.1:" + std::to_string(free_port());
  Ran ran = setup({"--remote", url});
  EXPECT_EQ(ran.code, 1);
  EXPECT_THAT(ran.err, HasSubstr("runner " + url + " did not answer GET /v1/health"));
  EXPECT_THAT(ran.err, HasSubstr("kiln runner"));
  EXPECT_FALSE(fs::exists(run_));
}

TEST_F(SetupTest, ARunnerThatAnswersIsInTheManifestAndThePrompt) {
  runner::testing::FakeRunner runner;
  Ran ran = setup({"--remote", runner.url()});
  ASSERT_EQ(ran.code, 0) << ran.err;
  json manifest = json::parse(read_text(run_ / "manifest.json"));
  ASSERT_EQ(manifest["runners"].size(), 1u);
  EXPECT_EQ(manifest["runners"][0]["url"], runner.url());
  EXPECT_EQ(manifest["runners"][0]["gpus"].size(), 1u);  // the runner's one GPU, by name
  EXPECT_THAT(read_text(run_ / "PROMPT.md"), HasSubstr("- Runner: " + runner.url()));
  EXPECT_THAT(ran.out, HasSubstr("runner " + runner.url()));
  EXPECT_THAT(ran.out, Not(HasSubstr("only the CPU tools work")));
}

TEST_F(SetupTest, ABadBudgetFileIsRefused) {
  write_text(dir_ / "budget.json", R"({"promotion_margin": 2})");
  Ran ran = setup({"--budget", (dir_ / "budget.json").string()});
  EXPECT_EQ(ran.code, 1);
  EXPECT_THAT(ran.err, HasSubstr("promotion_margin"));
  write_text(dir_ / "budget.json", R"({"promotion_margin": 0.03})");
  ASSERT_EQ(setup({"--budget", (dir_ / "budget.json").string()}).code, 0);
  json manifest = json::parse(read_text(run_ / "manifest.json"));
  EXPECT_DOUBLE_EQ(manifest["budget"]["promotion_margin"].get<double>(), 0.03);
}

TEST_F(SetupTest, McpRefusesToStartWhenTheBundleChangedAndNamesTheFile) {
  ASSERT_EQ(setup().code, 0);
  const fs::path reference = tasks_ / "fp16_gemm" / "reference.cpp";
  write_text(reference, read_text(reference) + "\n// tolerance loosened\n");
  Ran ran = kiln({"mcp", "--run-dir", run_.string()});
  EXPECT_EQ(ran.code, 1);
  EXPECT_THAT(ran.err, HasSubstr("task bundle of this run changed"));
  EXPECT_THAT(ran.err, HasSubstr(reference.string() + " (changed)"));
  EXPECT_THAT(ran.err, Not(HasSubstr("starter.cu")));
}

TEST_F(SetupTest, McpOnTheRunRecordsEachSessionInItsOwnFile) {
  ASSERT_EQ(setup().code, 0);
  for (int i = 0; i < 2; ++i) {
    Ran ran =
        kiln({"mcp", "--run-dir", run_.string(), "--record", (run_ / "sessions").string() + "/"});
    EXPECT_EQ(ran.code, 0) << ran.err;  // stdin is /dev/null: the session ends at once
    sleep(1);                           // file names carry the second and the pid
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(run_ / "sessions")) files.push_back(entry.path());
  EXPECT_EQ(files.size(), 2u);
  for (const auto& file : files) EXPECT_EQ(file.extension(), ".jsonl");
}

TEST_F(SetupTest, FrontierShowPrintsTheEmptyFrontierOfANewRun) {
  ASSERT_EQ(setup().code, 0);
  Ran ran = kiln({"frontier", "show", run_.string()});
  ASSERT_EQ(ran.code, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("frontier of fp16_gemm (0 members)"));
  Ran inside = kiln({"frontier", "show"}, run_ / "worktree");
  EXPECT_EQ(inside.code, 0) << inside.err;
  Ran elsewhere = kiln({"frontier", "show", dir_.path().string()});
  EXPECT_EQ(elsewhere.code, 2);
  EXPECT_THAT(elsewhere.err, HasSubstr("not a run directory"));
}

TEST_F(SetupTest, ReportOfANewRunWritesAPageThatSaysThereAreNoResultsYet) {
  ASSERT_EQ(setup().code, 0);
  Ran ran = kiln({"report"}, run_ / "worktree");  // from the worktree: the run above it
  ASSERT_EQ(ran.code, 0) << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("wrote " + (run_ / "report.html").string()));
  EXPECT_THAT(ran.out, HasSubstr("no results yet"));
  const std::string page = read_text(run_ / "report.html");
  EXPECT_THAT(page, HasSubstr("No benchmark results yet"));
  EXPECT_FALSE(fs::exists(run_ / "results.sqlite"));  // reading the run created nothing
  Ran elsewhere = kiln({"report", dir_.path().string()});
  EXPECT_EQ(elsewhere.code, 2);
  EXPECT_THAT(elsewhere.err, HasSubstr("not a run directory"));
  Ran unwritable = kiln({"report", run_.string(), "--out", "/proc/kiln-report.html"});
  EXPECT_EQ(unwritable.code, 1);
  EXPECT_THAT(unwritable.err, HasSubstr("--out"));
}

}  // namespace
}  // namespace kiln::cli
