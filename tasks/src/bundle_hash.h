// The task hash: one SHA-256 over a bundle's files, so a run can name exactly the
// task it was measured under (tasks/FORMAT.md). Internal to kiln_tasks.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::tasks {

// Hashes the files (paths relative to `dir`) in the order given. Each file enters
// the digest as "NAME\nLENGTH\n" followed by its bytes, so no two different bundles
// produce the same byte stream (names hold no newline; the length ends the file).
Result<std::string> hash_bundle(const std::filesystem::path& dir,
                                const std::vector<std::string>& relative_files);

}  // namespace kiln::tasks
