#include "kiln/tools/candidate_source.h"

#include "kiln/base/file.h"

namespace kiln::tools {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

bool has_text(const json& arguments, const std::string& name) {
  return arguments.contains(name) && arguments[name].is_string() &&
         !arguments[name].get<std::string>().empty();
}

// `path` relative to `root` when it lies inside (both resolved), else empty.
fs::path inside(const fs::path& path, const fs::path& root) {
  std::error_code error;
  const fs::path resolved_root = fs::weakly_canonical(root, error);
  if (error || root.empty()) return {};
  const fs::path relative = path.lexically_relative(resolved_root);
  if (relative.empty() || *relative.begin() == ".." || relative == ".") return {};
  return relative;
}

}  // namespace

Result<Candidate> resolve_candidate(const json& arguments, const std::string& path_argument,
                                    const CandidateRoots& roots) {
  const bool has_path = has_text(arguments, path_argument);
  const bool has_source = has_text(arguments, "source");
  if (has_path == has_source)
    return make_error("give exactly one of `" + path_argument +
                      "` (a kernel.cu path inside the run directory) or `source` (the code "
                      "inline)");
  if (has_source) {
    std::string source = arguments["source"].get<std::string>();
    if (source.size() > kMaxCandidateBytes)
      return make_error("`source` is over 1 MiB; a kernel.cu that large is not a candidate");
    return Candidate{std::move(source), "", {}};
  }
  const std::string requested = arguments[path_argument].get<std::string>();
  std::error_code error;
  const fs::path given(requested);
  const fs::path path =
      fs::weakly_canonical(given.is_absolute() ? given : roots.run_dir / given, error);
  std::string shown;
  if (!error) {
    if (fs::path relative = inside(path, roots.run_dir); !relative.empty()) {
      shown = relative.generic_string();
    } else {
      for (const fs::path& root : roots.others) {
        const fs::path relative_to_other = inside(path, root);
        if (relative_to_other.empty()) continue;
        shown = (fs::weakly_canonical(root, error).filename() / relative_to_other).generic_string();
        break;
      }
    }
  }
  if (shown.empty()) {
    std::string where = "the run directory " + fs::weakly_canonical(roots.run_dir, error).string();
    for (const fs::path& root : roots.others) where += " or " + root.string();
    return make_error("`" + requested + "` lies outside " + where +
                      "; use files inside it (e.g. worktree/candidates/...), or pass the code as "
                      "`source`");
  }
  if (!fs::is_regular_file(path, error))
    return make_error("`" + requested + "` is not a file in " + roots.run_dir.string());
  if (fs::file_size(path, error) > kMaxCandidateBytes)
    return make_error("`" + requested + "` is over 1 MiB; that is not a kernel.cu");
  auto source = read_file(path);
  if (!source) return source.error();
  return Candidate{std::move(*source), shown, path};
}

}  // namespace kiln::tools
