#include "kiln/worker/environment_guard.h"

#include <cstdlib>

extern char** environ;

namespace kiln::worker {

namespace {

std::map<std::string, std::string> current_environment() {
  std::map<std::string, std::string> out;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0) continue;
    out.emplace(text.substr(0, equals), text.substr(equals + 1));
  }
  return out;
}

}  // namespace

EnvironmentGuard::EnvironmentGuard() : taken_(current_environment()) {}

std::vector<std::string> EnvironmentGuard::restore() const {
  std::vector<std::string> changes;
  const std::map<std::string, std::string> now = current_environment();
  for (const auto& [name, value] : now) {
    auto before = taken_.find(name);
    if (before == taken_.end()) {
      changes.push_back("set " + name);
      unsetenv(name.c_str());
    } else if (before->second != value) {
      changes.push_back("changed " + name);
      setenv(name.c_str(), before->second.c_str(), 1);
    }
  }
  for (const auto& [name, value] : taken_) {
    if (now.count(name) == 0) {
      changes.push_back("removed " + name);
      setenv(name.c_str(), value.c_str(), 1);
    }
  }
  return changes;
}

}  // namespace kiln::worker
