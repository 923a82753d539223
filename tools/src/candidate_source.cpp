#include "kiln/tools/candidate_source.h"

#include <algorithm>

#include "kiln/base/file.h"
#include "kiln/base/text.h"
#include "kiln/tasks/zoo_task.h"

namespace kiln::tools {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kOneOf =
    "pass exactly one of `candidate` (a kernel.cu path, relative to the run directory) or "
    "`source` (the kernel.cu code inline)";
constexpr const char* kDeprecationNote =
    "note: `path` is deprecated and goes away in the next release; pass the same value as "
    "`candidate`";

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

// How the candidate's file is shown: relative to the run directory, or <root name>/<path> for
// another root; empty when it lies in none.
std::string shown_name(const fs::path& path, const CandidateRoots& roots) {
  if (fs::path relative = inside(path, roots.run_dir); !relative.empty())
    return relative.generic_string();
  for (const fs::path& root : roots.others) {
    const fs::path relative = inside(path, root);
    if (relative.empty()) continue;
    std::error_code error;
    return (fs::weakly_canonical(root, error).filename() / relative).generic_string();
  }
  return "";
}

Result<Candidate> read_candidate_file(const std::string& requested, const CandidateRoots& roots) {
  std::error_code error;
  const fs::path given(requested);
  const fs::path path =
      fs::weakly_canonical(given.is_absolute() ? given : roots.run_dir / given, error);
  const std::string run_dir = fs::weakly_canonical(roots.run_dir, error).string();
  const std::string shown = error ? "" : shown_name(path, roots);
  if (shown.empty()) {
    std::string where = "the run directory " + run_dir;
    for (const fs::path& root : roots.others) where += " or " + root.string();
    return make_error("`" + requested + "` lies outside " + where +
                      "; use files inside it (e.g. worktree/candidates/...), or pass the code as "
                      "`source`");
  }
  if (!fs::is_regular_file(path, error))
    return make_error("`" + requested +
                      "` is not a file: relative paths start at the run directory " + run_dir +
                      "; check the path, or pass the code as `source`");
  if (fs::file_size(path, error) > kMaxCandidateBytes)
    return make_error("`" + requested +
                      "` is over 1 MiB, far more than any kernel.cu; name the kernel source "
                      "itself, not a build output or a data file");
  auto source = read_file(path);
  if (!source)
    return make_error("cannot read `" + requested +
                      "` (no permission?); make it readable, or pass the code as `source`");
  if (const size_t at = invalid_utf8_at(*source); at != std::string_view::npos) {
    const size_t line = static_cast<size_t>(std::count(
                            source->begin(), source->begin() + static_cast<long>(at), '\n')) +
                        1;
    return make_error("`" + requested + "` is not UTF-8 text (line " + std::to_string(line) +
                      ", byte " + std::to_string(at) +
                      "); kiln sends sources as JSON, which carries only UTF-8: save the file as "
                      "UTF-8 (a comment in another encoding is the usual cause)");
  }
  return Candidate{std::move(*source), shown, path, ""};
}

// The candidate from `name`, the argument that holds its path ("candidate" or "path"; empty
// when neither does), or from `source`.
Result<Candidate> resolve(const json& arguments, const std::string& name,
                          const CandidateRoots& roots) {
  const bool has_source = has_text(arguments, "source");
  const std::string task = arguments.value("task", "");
  if (name.empty() && !has_source && !roots.zoo_dir.empty() && tasks::is_zoo_task_name(task)) {
    // A zoo task's own kernel: the entry proves its contract on the same tools.
    const std::string id = task.substr(tasks::kZooTaskPrefix.size());
    const fs::path kernel = roots.zoo_dir / id / "kernel.cu";
    std::error_code error;
    if (id.find('/') == std::string::npos && fs::is_regular_file(kernel, error))
      return read_candidate_file(kernel.string(), roots);
    return make_error("no candidate given, and there is no zoo entry `" + id +
                      "` with a kernel.cu to run by default (search_zoo lists the ids): " + kOneOf);
  }
  if (name.empty() && !has_source) return make_error(std::string("no candidate given: ") + kOneOf);
  if (!name.empty() && has_source)
    return make_error("both `" + name + "` and `source` given: " + kOneOf + ", not both");
  if (has_source) {
    std::string source = arguments["source"].get<std::string>();
    if (source.size() > kMaxCandidateBytes)
      return make_error(
          "`source` is over 1 MiB, far more than any kernel.cu; pass the kernel source itself");
    return Candidate{std::move(source), "", {}, ""};
  }
  return read_candidate_file(arguments[name].get<std::string>(), roots);
}

}  // namespace

void add_candidate_properties(json& input_schema, LegacyPath legacy) {
  json& properties = input_schema["properties"];
  properties["candidate"] = {
      {"type", "string"},
      {"description",
       "the candidate kernel.cu: a path relative to the run directory (e.g. "
       "worktree/candidates/<task>/scratch/kernel.cu), or absolute inside it or the task "
       "bundles. Give this or `source`"}};
  properties["source"] = {
      {"type", "string"},
      {"description", "the candidate's kernel.cu code inline, instead of `candidate`"}};
  if (legacy == LegacyPath::kAccepted)
    properties["path"] = {
        {"type", "string"},
        {"description", "deprecated: use candidate (same meaning; removed in the next release)"}};
}

Result<Candidate> resolve_candidate(const json& arguments, const CandidateRoots& roots) {
  const bool has_new = has_text(arguments, "candidate");
  const bool legacy = has_text(arguments, "path");
  if (has_new && legacy && arguments["candidate"] != arguments["path"])
    return make_error("`candidate` (" + arguments["candidate"].dump() + ") and `path` (" +
                      arguments["path"].dump() +
                      ") name different files; keep `candidate` and drop `path`, its deprecated "
                      "old name");
  auto candidate = resolve(arguments, has_new ? "candidate" : legacy ? "path" : "", roots);
  if (!legacy) return candidate;
  if (!candidate) return make_error(candidate.error().message + "\n" + kDeprecationNote);
  candidate->note = kDeprecationNote;
  return candidate;
}

mcp::ToolResult with_candidate_note(mcp::ToolResult result, const Candidate& candidate) {
  if (candidate.note.empty()) return result;
  if (result.text.empty()) result.text = result.structured.dump();  // what the text would be
  if (result.text.back() != '\n') result.text += "\n";
  result.text += candidate.note + "\n";
  return result;
}

}  // namespace kiln::tools
