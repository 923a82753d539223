// A bearer token drawn at random, for a runner that only this process talks to. (Tokens a
// person gives are read from a file by kiln::http::read_token_file, never from the command
// line, where `ps` shows them.)
#pragma once

#include <string>

namespace kiln::runner {

// 32 random hex digits.
std::string random_token();

}  // namespace kiln::runner
