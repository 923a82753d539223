// What the fuzz targets share: a check that stops the program, in the libFuzzer build and in the
// replay driver alike, so a broken property is a crash with its input saved; and the check that
// a reply kiln would send is JSON a client can read.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "kiln/base/json_text.h"

namespace kiln::fuzz {

// Stops the program when `ok` is false: the fuzz target's property `what` does not hold.
inline void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "kiln fuzz: property broken: %s\n", what);
  std::abort();
}

// `value` written as kiln's servers write replies (json_text) parses back as JSON. The depth
// allows for the envelope a reply puts around a value that was itself read at the limit.
inline void check_wire(const nlohmann::json& value, const char* what) {
  check(parse_json_bounded(json_text(value), 4 * kMaxJsonDepth).ok(), what);
}

}  // namespace kiln::fuzz
