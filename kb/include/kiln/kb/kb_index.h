// The knowledge-base index: one SQLite file with FTS5 tables (BM25 ranking) over
// the zoo, the CCCL PTX instruction forms, kiln's PTX notes and ingested PTX ISA
// documents. Built whole by build_index (into a temp file, then renamed into
// place, so readers and concurrent builders never see a half-written index) and
// opened read-only by KbIndex.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/kb/cccl_header.h"
#include "kiln/kb/fts_query.h"
#include "kiln/kb/kb_paths.h"

namespace kiln::kb {}  // namespace kiln::kb

namespace kiln::sqlite {
class Database;
}  // namespace kiln::sqlite

namespace kiln::kb {

struct BuildReport {
  std::filesystem::path index_path;
  std::string content_hash;
  bool cccl_found = false;
  std::filesystem::path cccl_dir;
  size_t cccl_headers = 0;
  size_t ptx_forms = 0;
  size_t ptx_notes = 0;
  size_t note_sections = 0;
  size_t documents = 0;
  size_t document_sections = 0;
  size_t zoo_entries = 0;
  double seconds = 0;
  std::vector<std::string> warnings;  // broken entries or notes, skipped

  nlohmann::json to_json() const;
  std::string summary() const;  // a few lines for `kiln kb build`
};

Result<BuildReport> build_index(const KbPaths& paths, const std::filesystem::path& out);

struct ZooQuery {
  std::string text{};  // free text; may be empty when a filter is given
  std::string op{}, technique{}, arch{}, dtype{};
  int limit = 5;  // 1..50
  int offset = 0;
};

struct ZooHit {
  std::string id, title, op, arch, description;
  std::vector<std::string> techniques, dtypes;
  nlohmann::json measured = nlohmann::json::array();
  std::string snippet;  // matched words in «»
  double score = 0;     // -bm25: higher is better; 0 without a query
  std::map<std::string, std::vector<std::string>>
      matched_fields;                        // field -> query words found there
  std::vector<std::string> matched_filters;  // "op=gemm_tn"
};

struct ZooPage {
  std::vector<ZooHit> hits;
  int64_t total = 0;               // matches before paging
  std::vector<std::string> terms;  // the words searched for
};

struct PtxQuery {
  std::string text{};  // free text
  std::string
      instruction{};  // exact opcode or opcode prefix: "mbarrier.try_wait", "cp.async.bulk.tensor"
  int limit = 8;
  int offset = 0;
};

struct PtxSectionHit {
  std::string id;    // note id, "note:section" or "document:number"
  std::string kind;  // "note" (a whole note), "note_section", "document"
  std::string title;
  std::vector<std::string> instructions;
  std::string requirements;              // a note's "requires:" line, e.g. "PTX ISA 8.0, sm_90"
  std::vector<std::string> subsections;  // for a whole note: its section ids
  std::string snippet;
  double score = 0;
  std::vector<std::string> matched;  // fields that matched
};

struct PtxPage {
  std::vector<InstructionForm> forms;
  int64_t total_forms = 0;
  std::vector<PtxSectionHit> sections;
  int64_t total_sections = 0;
  std::string instruction;         // the opcode actually looked up (may be a shorter prefix)
  std::vector<std::string> terms;  // the words searched for
};

struct SectionText {
  std::string id, kind, title, text, path;
  std::string requirements;
  std::vector<std::string> instructions;
  std::vector<std::string> subsections;
};

class KbIndex {
 public:
  // Opens a built index read-only; fails when it is missing, corrupt or of another format.
  static Result<std::unique_ptr<KbIndex>> open(const std::filesystem::path& path);
  ~KbIndex();
  KbIndex(const KbIndex&) = delete;
  KbIndex& operator=(const KbIndex&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string meta(const std::string& key)
      const;  // content_hash, format, built_at, cccl_found, cccl_dir, report

  // Errors: an empty query without filters, an unknown technique or op (listing the valid ones).
  Result<ZooPage> search_zoo(const ZooQuery& query) const;
  // Exactly one of text and instruction. Errors: neither, or an instruction nothing knows.
  Result<PtxPage> search_ptx(const PtxQuery& query) const;
  std::optional<SectionText> read_section(const std::string& id) const;

  std::vector<std::string> section_ids() const;
  std::vector<std::string> opcodes() const;  // distinct, forms and notes
  std::vector<std::string> techniques() const;
  std::vector<std::string> ops() const;
  std::vector<std::string> archs() const;
  std::vector<std::string> dtypes() const;
  std::vector<std::string> zoo_ids() const;

 private:
  KbIndex(std::filesystem::path path, std::unique_ptr<sqlite::Database> db);
  std::vector<std::string> strings(const std::string& sql) const;
  ZooPage search_zoo_page(const ZooQuery& query,
                          const FtsQuery& fts) const;  // throws on SQLite errors
  Result<PtxPage> lookup_instruction(const PtxQuery& query) const;
  Result<PtxPage> search_ptx_text(const PtxQuery& query) const;

  std::filesystem::path path_;
  mutable std::mutex mutex_;  // one connection, used by one thread at a time
  std::unique_ptr<sqlite::Database> db_;
};

}  // namespace kiln::kb
