#include "kiln/kb/source_set.h"

#include <algorithm>

#include "kiln/base/file.h"
#include "kiln/base/sha256.h"

namespace kiln::kb {

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> files_in(const fs::path& dir, const std::vector<std::string>& extensions) {
  std::vector<fs::path> out;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    if (!it->is_regular_file(error)) continue;
    std::string ext = it->path().extension().string();
    if (std::find(extensions.begin(), extensions.end(), ext) != extensions.end())
      out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The name a file is hashed under: stable when the checkout moves.
std::string hashed_name(const SourceFile& file) {
  fs::path parent = file.path.parent_path().filename();
  return std::to_string(static_cast<int>(file.kind)) + ":" +
         (file.kind == SourceKind::kZooFile ? parent.string() + "/" : "") +
         file.path.filename().string();
}

}  // namespace

SourceSet collect_sources(const KbPaths& paths) {
  SourceSet set;
  for (const auto& path : files_in(paths.cccl_dir, {".h"}))
    set.files.push_back({SourceKind::kCcclHeader, path});
  set.cccl_found = !set.files.empty();
  for (const auto& path : files_in(paths.notes_dir(), {".md"}))
    set.files.push_back({SourceKind::kPtxNote, path});
  for (const char* name : {"techniques.json", "README.md"}) {
    if (fs::exists(paths.zoo_dir() / name))
      set.files.push_back({SourceKind::kZooVocabulary, paths.zoo_dir() / name});
  }
  std::error_code error;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(paths.zoo_dir(), error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_directory() && fs::exists(it->path() / "meta.json")) entries.push_back(it->path());
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& entry : entries) {
    for (const char* name : {"meta.json", "NOTES.md", "kernel.cu"}) {
      if (fs::exists(entry / name)) set.files.push_back({SourceKind::kZooFile, entry / name});
    }
  }
  for (const auto& path : files_in(paths.documents_dir(), {".html", ".htm", ".md"}))
    set.files.push_back({SourceKind::kPtxDocument, path});
  return set;
}

std::string source_fingerprint(const SourceSet& sources) {
  Sha256 hash;
  hash.update("kiln-kb-fingerprint " + std::to_string(kIndexFormatVersion) + "\n");
  for (const auto& file : sources.files) {
    std::error_code error;
    auto size = fs::file_size(file.path, error);
    auto time = fs::last_write_time(file.path, error).time_since_epoch().count();
    hash.update(file.path.string() + "\t" + std::to_string(error ? 0 : size) + "\t" +
                std::to_string(time) + "\n");
  }
  return hash.hex_digest();
}

struct ContentHasher::State {
  Sha256 hash;
};

ContentHasher::ContentHasher() : state_(std::make_unique<State>()) {
  state_->hash.update("kiln-kb-content " + std::to_string(kIndexFormatVersion) + "\n");
}

ContentHasher::~ContentHasher() = default;

void ContentHasher::add(const SourceFile& file, const std::string& bytes) {
  state_->hash.update(hashed_name(file) + "\t" + std::to_string(bytes.size()) + "\n");
  state_->hash.update(bytes);
}

std::string ContentHasher::finish() { return state_->hash.hex_digest(); }

std::string source_content_hash(const SourceSet& sources) {
  ContentHasher hasher;
  for (const auto& file : sources.files) {
    auto bytes = read_file(file.path);
    hasher.add(file, bytes ? *bytes : std::string());
  }
  return hasher.finish();
}

}  // namespace kiln::kb
