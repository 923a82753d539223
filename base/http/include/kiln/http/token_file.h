// The bearer token of an HTTP server, read from a file: never from the command line,
// where `ps` shows it to every user of the machine.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "kiln/base/result.h"

namespace kiln::http {

// The least a token may hold: shorter secrets can be guessed.
inline constexpr std::size_t kMinTokenLength = 16;

// The file's contents without trailing whitespace (a newline from `echo` or an
// editor). An unreadable file, or a token under kMinTokenLength characters, is an
// error that says how to make a good one.
Result<std::string> read_token_file(const std::filesystem::path& path);

}  // namespace kiln::http
