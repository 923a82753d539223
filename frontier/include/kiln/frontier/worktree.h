// The run's worktree (RUN/worktree/): a git repository the agent works in and kiln commits
// the frontier to. Every git command runs through kiln's one process supervisor (argv, no
// shell, a deadline), as kiln, with hooks and signing off, so an agent's hook or
// configuration cannot block or rewrite a frontier commit. Commits name their paths: the
// agent's other work, staged or not, is never committed, stashed or reset.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::frontier {

class Worktree {
 public:
  explicit Worktree(std::filesystem::path dir) : dir_(std::move(dir)) {}

  const std::filesystem::path& dir() const { return dir_; }

  // `git init` in dir (which must exist) and a first commit of everything in it.
  Status init(const std::string& message) const;

  // Stages exactly `paths` (relative to dir; additions, changes and deletions) and commits
  // only them with `message`. Returns the new commit's id. Errors carry git's output.
  Result<std::string> commit_paths(const std::vector<std::string>& paths,
                                   const std::string& message) const;

  // `git status --porcelain` (for tests and diagnostics).
  Result<std::string> status() const;

 private:
  struct Run {
    bool ok = false;
    std::string output;
  };
  Run git(const std::vector<std::string>& arguments) const;

  std::filesystem::path dir_;
};

}  // namespace kiln::frontier
