#include "kiln/compiler/dependencies.h"

#include "kiln/base/sha256.h"

namespace kiln::compiler {

namespace fs = std::filesystem;

namespace {

fs::path normal(const fs::path& path) {
  std::error_code error;
  fs::path canonical = fs::weakly_canonical(path, error);
  return (error ? path : canonical).lexically_normal();
}

bool is_inside(const fs::path& path, const fs::path& dir) {
  const fs::path relative = path.lexically_relative(dir);
  return !relative.empty() && *relative.begin() != "..";
}

// Make's words: whitespace separates, backslash-newline continues, "\ " is a space in a name.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == '\r')) {
      continue;
    }
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == ' ') {
      word += ' ';
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

}  // namespace

std::vector<std::string> parse_dependency_file(const std::string& text, const fs::path& base_dir,
                                               const std::vector<fs::path>& skip_dirs,
                                               const std::vector<fs::path>& skip_files) {
  std::vector<fs::path> dirs, files;
  for (const auto& dir : skip_dirs) dirs.push_back(normal(dir));
  for (const auto& file : skip_files) files.push_back(normal(file));
  std::vector<std::string> out;
  bool after_target = false;
  for (const std::string& word : words(text)) {
    if (!after_target) {
      after_target = !word.empty() && word.back() == ':';
      continue;
    }
    if (word == ":") continue;
    const fs::path path = normal(fs::path(word).is_absolute() ? fs::path(word) : base_dir / word);
    bool skip = false;
    for (const auto& dir : dirs) skip = skip || is_inside(path, dir);
    for (const auto& file : files) skip = skip || path == file;
    if (!skip) out.push_back(path.string());
  }
  return out;
}

std::vector<Dependency> hash_dependencies(const std::vector<std::string>& paths) {
  std::vector<Dependency> out;
  for (const std::string& path : paths) {
    if (auto digest = sha256_file(path)) out.push_back({path, *digest});
  }
  return out;
}

bool dependencies_unchanged(const std::vector<Dependency>& dependencies) {
  for (const Dependency& dependency : dependencies) {
    auto digest = sha256_file(dependency.path);
    if (!digest || *digest != dependency.sha256) return false;
  }
  return true;
}

nlohmann::json dependencies_to_json(const std::vector<Dependency>& dependencies) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& d : dependencies) list.push_back({{"path", d.path}, {"sha256", d.sha256}});
  return list;
}

std::vector<Dependency> dependencies_from_json(const nlohmann::json& j) {
  std::vector<Dependency> out;
  if (!j.is_array()) return out;
  for (const auto& d : j) out.push_back({d.value("path", ""), d.value("sha256", "")});
  return out;
}

}  // namespace kiln::compiler
