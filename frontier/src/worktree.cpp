#include "kiln/frontier/worktree.h"

#include <chrono>

#include "kiln/base/process.h"

namespace kiln::frontier {

namespace fs = std::filesystem;

namespace {

constexpr auto kGitDeadline = std::chrono::seconds(60);
constexpr size_t kMaxOutput = 64 * 1024;

}  // namespace

Worktree::Run Worktree::git(const std::vector<std::string>& arguments) const {
  ProcessSpec spec;
  spec.argv = {"git",
               "-c",
               "user.name=kiln",
               "-c",
               "user.email=kiln@localhost",
               "-c",
               "commit.gpgsign=false",
               "-c",
               "core.hooksPath=/dev/null"};
  spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
  spec.search_path = true;
  spec.working_dir = dir_;
  spec.merge_stderr = true;
  // Neither the user's nor the system's git configuration may change what kiln commits.
  spec.extra_env = {{"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_TERMINAL_PROMPT", "0"}, {"LC_ALL", "C"}};
  ProcessLimits limits;
  limits.deadline = std::chrono::steady_clock::now() + kGitDeadline;
  Run run;
  ProcessOutput output;
  output.on_stdout = [&run](std::string_view chunk) {
    if (run.output.size() < kMaxOutput) run.output.append(chunk.substr(0, kMaxOutput));
    return true;
  };
  const ProcessExit exit = run_supervised(spec, limits, output);
  if (exit.how == ProcessExit::How::kSpawnFailed) {
    run.output =
        "git could not be started (" + exit.spawn_error + "); install git (apt-get install git)";
    return run;
  }
  if (exit.how == ProcessExit::How::kTimedOut) {
    run.output = "git " + (arguments.empty() ? "" : arguments.front()) + " took longer than 60 s";
    return run;
  }
  run.ok = exit.how == ProcessExit::How::kExited && exit.exit_code == 0;
  while (!run.output.empty() && (run.output.back() == '\n' || run.output.back() == ' '))
    run.output.pop_back();
  return run;
}

Status Worktree::init(const std::string& message) const {
  for (const auto& step : std::vector<std::vector<std::string>>{
           {"init", "-q", "-b", "main"},
           {"add", "-A", "."},
           {"commit", "-q", "--no-verify", "--allow-empty", "-m", message}}) {
    Run run = git(step);
    if (!run.ok)
      return make_error("git " + step.front() + " in " + dir_.string() + " failed: " + run.output);
  }
  return Ok{};
}

Result<std::string> Worktree::commit_paths(const std::vector<std::string>& paths,
                                           const std::string& message) const {
  // A path that is neither on disk nor known to git (a folder removed before it was ever
  // committed) is left out: git refuses a pathspec that matches nothing.
  std::vector<std::string> present;
  for (const auto& path : paths) {
    std::error_code error;
    if (fs::exists(dir_ / path, error)) {
      present.push_back(path);
      continue;
    }
    Run known = git({"ls-files", "--", path});
    if (known.ok && !known.output.empty()) present.push_back(path);
  }
  if (present.empty()) return make_error("nothing to commit: none of the frontier's paths exist");
  std::vector<std::string> add = {"add", "-A", "--"};
  add.insert(add.end(), present.begin(), present.end());
  if (Run run = git(add); !run.ok)
    return make_error("git add of the frontier's files failed: " + run.output);
  std::vector<std::string> commit = {"commit", "-q", "--no-verify", "-m", message, "--"};
  commit.insert(commit.end(), present.begin(), present.end());
  if (Run run = git(commit); !run.ok) return make_error("git commit failed: " + run.output);
  Run head = git({"rev-parse", "HEAD"});
  if (!head.ok) return make_error("git rev-parse HEAD failed: " + head.output);
  return head.output;
}

Result<std::string> Worktree::status() const {
  Run run = git({"status", "--porcelain"});
  if (!run.ok) return make_error("git status failed: " + run.output);
  return run.output;
}

}  // namespace kiln::frontier
