// `kiln task new`: a new task bundle to fill in. Without --like, a small working example (y =
// alpha * x in f32) whose task.json loads as it is, so every tool runs on it from the first
// minute; its title, description and README say TODO, and `kiln task check` fails its
// `template` step until no TODO is left (JSON has no comments: README.md's template explains
// every field). --like copies a bundle as the starting point; --from makes a kernel the starter.
#pragma once

#include <filesystem>
#include <string>

#include "kiln/base/result.h"

namespace kiln::taskcheck {

struct ScaffoldOptions {
  std::string name;              // [a-z0-9_]+; the folder's name and task.json's `name`
  std::filesystem::path parent;  // the bundle is made at parent/name (must not exist)
  std::filesystem::path like;    // a bundle folder to copy; empty: the generic example
  std::filesystem::path from;    // a kernel.cu to use as starter.cu; empty: the template's
};

// Writes the bundle and returns its folder.
Result<std::filesystem::path> scaffold_task(const ScaffoldOptions& options);

}  // namespace kiln::taskcheck
