// Reading the environment: one rule for every KILN_* (and XDG/HOME) variable kiln reads, that
// a variable set to the empty string counts as unset, so `KILN_X= kiln ...` restores a default.
// Header-only so that the GPU test binaries, which must not link kiln_base (and its OpenSSL),
// can use it too.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

// The value of the environment variable `name`; nullopt when it is unset or empty.
inline std::optional<std::string> env_value(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// The value of the environment variable `name`, or `fallback` when it is unset or empty.
inline std::string env_or(const char* name, std::string_view fallback) {
  return env_value(name).value_or(std::string(fallback));
}

}  // namespace kiln
