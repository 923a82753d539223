#include "confined_child.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <system_error>

namespace kiln::testing {
namespace {

ChildOutcome wait_for(pid_t child) {
  ChildOutcome outcome;
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  return outcome;
}

}  // namespace

ChildOutcome run_confined(const ConfinePolicy& policy,
                          const std::function<int(const ConfineReport&)>& probe) {
  std::fflush(nullptr);
  pid_t child = fork();
  if (child < 0) return ChildOutcome{};
  if (child == 0) {
    auto confined = confine_this_process(policy);
    if (!confined) {
      std::fprintf(stderr, "%s\n", confined.error().message.c_str());
      _exit(kConfineFailed);
    }
    int code = probe(*confined);
    std::fflush(nullptr);
    _exit(code);
  }
  return wait_for(child);
}

ChildOutcome run_unconfined(const std::function<int()>& probe) {
  std::fflush(nullptr);
  pid_t child = fork();
  if (child < 0) return ChildOutcome{};
  if (child == 0) {
    int code = probe();
    std::fflush(nullptr);
    _exit(code);
  }
  return wait_for(child);
}

ConfinePolicy cuda_policy() { return ConfinePolicy::for_cuda_process(KILN_CUDA_ROOT); }

int errno_if(bool failed) { return failed ? errno : 0; }

std::filesystem::path write_in(const TempDir& dir, const std::string& relative,
                               const std::string& text) {
  const std::filesystem::path file = dir / relative;
  write_text(file, text + "\n");
  return file;
}

std::string read_first_line(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace kiln::testing
