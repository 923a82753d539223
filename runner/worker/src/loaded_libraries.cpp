#include "kiln/worker/loaded_libraries.h"

#include <link.h>

#include <filesystem>

namespace kiln::worker {

std::vector<std::string> LoadedLibraries::new_since_last() {
  std::vector<std::string> all;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
          static_cast<std::vector<std::string>*>(out)->push_back(
              std::filesystem::path(info->dlpi_name).filename().string());
        return 0;
      },
      &all);
  std::vector<std::string> fresh;
  for (auto& name : all) {
    if (seen_.insert(name).second) fresh.push_back(std::move(name));
  }
  return fresh;
}

std::vector<std::string> banned_among(const std::vector<std::string>& loaded,
                                      const std::vector<std::string>& banned_prefixes) {
  std::vector<std::string> found;
  for (const auto& name : loaded) {
    const std::string bare = name.rfind("lib", 0) == 0 ? name.substr(3) : name;
    for (const auto& prefix : banned_prefixes) {
      if (!prefix.empty() && bare.rfind(prefix, 0) == 0) {
        found.push_back(name + " is loaded in the candidate's process (the task bans " + prefix +
                        ")");
        break;
      }
    }
  }
  return found;
}

}  // namespace kiln::worker
