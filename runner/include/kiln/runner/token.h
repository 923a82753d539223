// Bearer tokens: read from a file (never from the command line, where `ps` shows it),
// or drawn at random for a runner that only this process talks to.
#pragma once

#include <filesystem>
#include <string>

#include "kiln/base/result.h"

namespace kiln::runner {

// The file's contents without trailing whitespace; an empty or short token is an error.
Result<std::string> read_token_file(const std::filesystem::path& path);

// 32 random hex digits.
std::string random_token();

}  // namespace kiln::runner
