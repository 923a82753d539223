// The files the index is built from, and the two digests that decide staleness:
// a cheap fingerprint (path, size, mtime) checked often, and a content hash
// (SHA-256 over every file's bytes) checked when the fingerprint moves. The index
// stores the content hash it was built from.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kiln/kb/kb_paths.h"

namespace kiln::kb {

// Bump when the index schema or what is extracted changes: every index rebuilds.
inline constexpr int kIndexFormatVersion = 2;

enum class SourceKind { kCcclHeader, kPtxNote, kZooFile, kZooVocabulary, kPtxDocument };

struct SourceFile {
  SourceKind kind;
  std::filesystem::path path;
};

struct SourceSet {
  std::vector<SourceFile> files;  // sorted by kind, then path
  bool cccl_found = false;        // the CCCL header folder exists and has headers
};

SourceSet collect_sources(const KbPaths& paths);

// SHA-256 over each file's path, size and modification time (no reads).
std::string source_fingerprint(const SourceSet& sources);

// SHA-256 over the format version and each file's kind, name and bytes. Unreadable
// files count as empty.
std::string source_content_hash(const SourceSet& sources);

// Incremental form of the same, for builders that read each file anyway.
class ContentHasher {
 public:
  ContentHasher();
  ~ContentHasher();
  ContentHasher(const ContentHasher&) = delete;
  ContentHasher& operator=(const ContentHasher&) = delete;
  void add(const SourceFile& file, const std::string& bytes);
  std::string finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace kiln::kb
