// build_index: reads every source once (hashing the same bytes it indexes), fills a
// fresh SQLite file next to the target, then renames it into place.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <random>
#include <set>
#include <sstream>

#include "fts_functions.h"
#include "kiln/base/file.h"
#include "kiln/base/text.h"
#include "kiln/kb/kb_index.h"
#include "kiln/kb/ptx_document.h"
#include "kiln/kb/ptx_note.h"
#include "kiln/kb/source_set.h"
#include "kiln/kb/zoo_entry.h"
#include "kiln/sqlite/database.h"

namespace kiln::kb {

namespace fs = std::filesystem;
using json = nlohmann::json;
using sqlite::Database;
using sqlite::Statement;

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE technique(name TEXT PRIMARY KEY, definition TEXT NOT NULL);
CREATE TABLE op(name TEXT PRIMARY KEY);
CREATE TABLE zoo(rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, title TEXT, op TEXT, arch TEXT,
                 techniques TEXT, dtypes TEXT, description TEXT, measured TEXT, related TEXT);
CREATE TABLE zoo_technique(entry INTEGER NOT NULL, technique TEXT NOT NULL);
CREATE TABLE zoo_dtype(entry INTEGER NOT NULL, dtype TEXT NOT NULL);
CREATE INDEX zoo_technique_by_name ON zoo_technique(technique, entry);
CREATE INDEX zoo_dtype_by_name ON zoo_dtype(dtype, entry);
CREATE VIRTUAL TABLE zoo_fts USING fts5(id, title, op, techniques, technique_text, arch, dtypes, description,
                                        notes, code, joined_names, tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TABLE ptx_form(rowid INTEGER PRIMARY KEY, opcode TEXT, syntax TEXT, ptx_isa TEXT, ptx_isa_number INTEGER,
                      sms TEXT, min_sm TEXT, modifiers TEXT, wrapper TEXT, signature TEXT, header TEXT, notes TEXT);
CREATE INDEX ptx_form_by_opcode ON ptx_form(opcode);
CREATE VIRTUAL TABLE ptx_form_fts USING fts5(opcode, syntax, wrapper, modifiers, header,
                                             tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TABLE ptx_note(id TEXT PRIMARY KEY, title TEXT, instructions TEXT, requires TEXT, path TEXT, text TEXT,
                      sections TEXT);
CREATE TABLE ptx_section(rowid INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, kind TEXT NOT NULL, source TEXT,
                         title TEXT, heading TEXT, instructions TEXT, requires TEXT, text TEXT, path TEXT,
                         first_line INTEGER, level INTEGER);
CREATE VIRTUAL TABLE ptx_section_fts USING fts5(title, heading, instructions, text,
                                                tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TABLE ptx_instruction(instruction TEXT NOT NULL, target_kind TEXT NOT NULL, target TEXT NOT NULL);
CREATE INDEX ptx_instruction_by_name ON ptx_instruction(instruction);
)sql";

std::string now_iso8601() {
  std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

fs::path temp_path_for(const fs::path& out) {
  std::random_device random;
  fs::path temp = out;
  temp += ".tmp." + std::to_string(getpid()) + "." + std::to_string(random());
  return temp;
}

// Each two adjacent parts of the id, the op and the techniques as one word ("split_k" gives
// "splitk", "gemm_tma_store_epilogue" gives "gemmtma tmastore storeepilogue"): the tokenizer
// splits names at '_', so a query that writes a name as one word ("splitk", "pingpong") would
// otherwise miss it.
std::string joined_names(const ZooEntry& entry) {
  std::vector<std::string> names = {entry.id, entry.op};
  names.insert(names.end(), entry.techniques.begin(), entry.techniques.end());
  std::vector<std::string> joined;
  for (const auto& name : names) {
    std::vector<std::string> parts;
    std::string part;
    for (char c : name + "_") {
      if (c == '_') {
        if (!part.empty()) parts.push_back(part);
        part.clear();
      } else {
        part += c;
      }
    }
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      std::string word = parts[i] + parts[i + 1];
      if (std::find(joined.begin(), joined.end(), word) == joined.end()) joined.push_back(word);
    }
  }
  return join(joined, " ");
}

// The builder's state: one open database and the statements it reuses.
class Builder {
 public:
  Builder(Database& db, BuildReport& report) : db_(db), report_(report) {}

  void add_vocabulary(const ZooVocabulary& vocabulary) {
    Statement technique(db_.handle(),
                        "INSERT OR REPLACE INTO technique(name, definition) VALUES(?1, ?2)");
    for (const auto& [name, definition] : vocabulary.techniques) {
      technique.bind(1, name).bind(2, definition).run();
      technique.reset();
    }
    Statement op(db_.handle(), "INSERT OR IGNORE INTO op(name) VALUES(?1)");
    for (const auto& name : vocabulary.ops) {
      op.bind(1, name).run();
      op.reset();
    }
    definitions_ = vocabulary.techniques;
  }

  void add_zoo_entry(const ZooEntry& entry) {
    Statement zoo(
        db_.handle(),
        "INSERT INTO zoo(id, title, op, arch, techniques, dtypes, description, measured, related) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    zoo.bind(1, entry.id).bind(2, entry.title).bind(3, entry.op).bind(4, entry.arch);
    zoo.bind(5, json(entry.techniques).dump())
        .bind(6, json(entry.dtypes).dump())
        .bind(7, entry.description);
    zoo.bind(8, entry.measured.dump()).bind(9, json(entry.related).dump()).run();
    int64_t rowid = db_.last_rowid();
    Statement technique(db_.handle(), "INSERT INTO zoo_technique(entry, technique) VALUES(?1, ?2)");
    std::string definitions;
    for (const auto& name : entry.techniques) {
      technique.bind(1, rowid).bind(2, name).run();
      technique.reset();
      if (auto it = definitions_.find(name); it != definitions_.end())
        definitions += it->second + "\n";
      else
        report_.warnings.push_back("zoo entry `" + entry.id + "`: technique `" + name +
                                   "` is not in techniques.json");
    }
    Statement dtype(db_.handle(), "INSERT INTO zoo_dtype(entry, dtype) VALUES(?1, ?2)");
    for (const auto& name : entry.dtypes) {
      dtype.bind(1, rowid).bind(2, name).run();
      dtype.reset();
    }
    Statement op(db_.handle(), "INSERT OR IGNORE INTO op(name) VALUES(?1)");
    op.bind(1, entry.op).run();
    Statement fts(db_.handle(),
                  "INSERT INTO zoo_fts(rowid, id, title, op, techniques, technique_text, arch, "
                  "dtypes, description, notes, code, joined_names) "
                  "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
    fts.bind(1, rowid)
        .bind(2, entry.id)
        .bind(3, entry.title)
        .bind(4, entry.op)
        .bind(5, join(entry.techniques, " "));
    fts.bind(6, definitions)
        .bind(7, entry.arch)
        .bind(8, join(entry.dtypes, " "))
        .bind(9, entry.description);
    fts.bind(10, entry.notes).bind(11, entry.kernel).bind(12, joined_names(entry)).run();
    for (const auto& warning : entry.warnings)
      report_.warnings.push_back("zoo entry `" + entry.id + "`: " + warning);
    ++report_.zoo_entries;
  }

  void add_forms(const std::vector<InstructionForm>& forms) {
    Statement form(
        db_.handle(),
        "INSERT INTO ptx_form(opcode, syntax, ptx_isa, ptx_isa_number, sms, min_sm, modifiers, "
        "wrapper, "
        "signature, header, notes) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    Statement fts(db_.handle(),
                  "INSERT INTO ptx_form_fts(rowid, opcode, syntax, wrapper, modifiers, header) "
                  "VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    for (const auto& f : forms) {
      form.bind(1, f.opcode).bind(2, f.syntax).bind(3, f.ptx_isa).bind(4, f.ptx_isa_number);
      form.bind(5, join(f.sms, ", ")).bind(6, f.min_sm).bind(7, f.modifiers).bind(8, f.wrapper);
      form.bind(9, f.signature).bind(10, f.header).bind(11, f.notes).run();
      form.reset();
      fts.bind(1, db_.last_rowid()).bind(2, f.opcode).bind(3, f.syntax).bind(4, f.wrapper);
      fts.bind(5, f.modifiers).bind(6, f.header).run();
      fts.reset();
      ++report_.ptx_forms;
    }
  }

  void add_note(const PtxNote& note, const fs::path& path) {
    std::vector<std::string> section_ids;
    auto found = note.front_matter.find("requires");
    const std::string requirements = found == note.front_matter.end() ? "" : found->second;
    for (const auto& section : note.sections) {
      std::string id = note.id + ":" + section.slug;
      section_ids.push_back(id);
      std::string title = note.title + (section.slug == "overview" ? "" : " — " + section.heading);
      add_section(id, "note_section", note.id, title, section.heading, note.instructions,
                  requirements, section.text, path, section.first_line, 2);
      ++report_.note_sections;
    }
    Statement row(db_.handle(),
                  "INSERT INTO ptx_note(id, title, instructions, requires, path, text, sections) "
                  "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    row.bind(1, note.id)
        .bind(2, note.title)
        .bind(3, join(note.instructions, ", "))
        .bind(4, requirements);
    row.bind(5, path.string()).bind(6, note.text).bind(7, json(section_ids).dump()).run();
    for (const auto& instruction : note.instructions) add_instruction(instruction, "note", note.id);
    ++report_.ptx_notes;
  }

  void add_document(const std::vector<DocumentSection>& sections, const fs::path& path) {
    for (const auto& section : sections) {
      add_section(section.id, "document", document_name(path), section.title, section.title,
                  section.instructions, "", section.text, path, 0, section.level);
      for (const auto& instruction : section.instructions)
        add_instruction(instruction, "section", section.id);
      ++report_.document_sections;
    }
    ++report_.documents;
  }

 private:
  void add_section(const std::string& id, const std::string& kind, const std::string& source,
                   const std::string& title, const std::string& heading,
                   const std::vector<std::string>& instructions, const std::string& requirements,
                   const std::string& text, const fs::path& path, int first_line, int level) {
    Statement row(db_.handle(),
                  "INSERT OR IGNORE INTO ptx_section(id, kind, source, title, heading, "
                  "instructions, requires, text, "
                  "path, first_line, level) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    row.bind(1, id)
        .bind(2, kind)
        .bind(3, source)
        .bind(4, title)
        .bind(5, heading)
        .bind(6, join(instructions, ", "));
    row.bind(7, requirements)
        .bind(8, text)
        .bind(9, path.string())
        .bind(10, first_line)
        .bind(11, level)
        .run();
    if (sqlite3_changes(db_.handle()) == 0) {
      report_.warnings.push_back("PTX section id `" + id +
                                 "` appears twice; the second was skipped");
      return;
    }
    Statement fts(db_.handle(),
                  "INSERT INTO ptx_section_fts(rowid, title, heading, instructions, text) "
                  "VALUES(?1, ?2, ?3, ?4, ?5)");
    fts.bind(1, db_.last_rowid())
        .bind(2, title)
        .bind(3, heading)
        .bind(4, join(instructions, " "))
        .bind(5, text)
        .run();
  }

  void add_instruction(const std::string& instruction, const std::string& kind,
                       const std::string& target) {
    Statement row(
        db_.handle(),
        "INSERT INTO ptx_instruction(instruction, target_kind, target) VALUES(?1, ?2, ?3)");
    row.bind(1, instruction).bind(2, kind).bind(3, target).run();
  }

  Database& db_;
  BuildReport& report_;
  std::map<std::string, std::string> definitions_;
};

void fill(Database& db, const KbPaths& paths, BuildReport& report) {
  SourceSet sources = collect_sources(paths);
  report.cccl_found = sources.cccl_found;
  report.cccl_dir = paths.cccl_dir;
  ContentHasher hasher;
  Builder builder(db, report);

  // Read everything first: the hash covers exactly the bytes indexed.
  std::vector<std::string> contents;
  for (const auto& file : sources.files) {
    auto bytes = read_file(file.path);
    contents.push_back(bytes ? std::move(*bytes) : std::string());
    hasher.add(file, contents.back());
  }

  ZooVocabulary vocabulary = load_zoo_vocabulary(paths.zoo_dir());
  builder.add_vocabulary(vocabulary);
  std::map<fs::path, std::map<std::string, std::string>>
      zoo_files;  // entry dir -> file name -> bytes
  for (size_t i = 0; i < sources.files.size(); ++i) {
    const SourceFile& file = sources.files[i];
    const std::string& bytes = contents[i];
    switch (file.kind) {
      case SourceKind::kCcclHeader:
        builder.add_forms(parse_cccl_header(bytes, file.path.filename().string()));
        ++report.cccl_headers;
        break;
      case SourceKind::kPtxNote: {
        auto note = parse_ptx_note(bytes, file.path.stem().string());
        if (note)
          builder.add_note(*note, file.path);
        else
          report.warnings.push_back(note.error().message + " (skipped)");
        break;
      }
      case SourceKind::kZooFile:
        zoo_files[file.path.parent_path()][file.path.filename().string()] = bytes;
        break;
      case SourceKind::kPtxDocument:
        builder.add_document(split_ptx_document(bytes, document_name(file.path)), file.path);
        break;
      case SourceKind::kZooVocabulary:
        break;
    }
  }
  for (auto& [dir, files] : zoo_files) {
    auto entry = parse_zoo_entry(dir.filename().string(), files["meta.json"]);
    if (!entry) {
      report.warnings.push_back(entry.error().message + " (skipped)");
      continue;
    }
    entry->notes = files["NOTES.md"];
    entry->kernel = files["kernel.cu"];
    if (!files.count("NOTES.md")) entry->warnings.push_back("no NOTES.md");
    if (!files.count("kernel.cu")) entry->warnings.push_back("no kernel.cu");
    builder.add_zoo_entry(*entry);
  }
  if (!report.cccl_found) {
    report.warnings.push_back(
        "no CCCL PTX headers at " + paths.cccl_dir.string() +
        "; PTX instruction forms are not indexed (set KILN_CCCL_PTX_DIR or install the CUDA "
        "toolkit)");
  }
  report.content_hash = hasher.finish();

  for (const char* table : {"zoo_fts", "ptx_form_fts", "ptx_section_fts"})
    db.exec(std::string("INSERT INTO ") + table + "(" + table + ") VALUES('optimize')");
  Statement meta(db.handle(), "INSERT INTO meta(key, value) VALUES(?1, ?2)");
  auto put = [&](const std::string& key, const std::string& value) {
    meta.bind(1, key).bind(2, value).run();
    meta.reset();
  };
  put("format", std::to_string(kIndexFormatVersion));
  put("content_hash", report.content_hash);
  put("built_at", now_iso8601());
  put("cccl_found", report.cccl_found ? "1" : "0");
  put("cccl_dir", paths.cccl_dir.string());
  put("kb_dir", paths.kb_dir.string());
  json stored = report.to_json();
  stored.erase("seconds");  // not known yet, and not a property of the content
  put("report", stored.dump());
}

}  // namespace

json BuildReport::to_json() const {
  return json{{"index_path", index_path.string()},
              {"content_hash", content_hash},
              {"cccl_found", cccl_found},
              {"cccl_dir", cccl_dir.string()},
              {"cccl_headers", cccl_headers},
              {"ptx_forms", ptx_forms},
              {"ptx_notes", ptx_notes},
              {"note_sections", note_sections},
              {"documents", documents},
              {"document_sections", document_sections},
              {"zoo_entries", zoo_entries},
              {"seconds", seconds},
              {"warnings", warnings}};
}

std::string BuildReport::summary() const {
  std::ostringstream out;
  out << "index " << index_path.string() << " (content sha256 " << content_hash.substr(0, 12)
      << ")\n";
  out << "zoo entries: " << zoo_entries << "\n";
  if (cccl_found) {
    out << "PTX instruction forms: " << ptx_forms << " from " << cccl_headers << " CCCL headers in "
        << cccl_dir.string() << "\n";
  } else {
    out << "PTX instruction forms: none (no CCCL headers at " << cccl_dir.string() << ")\n";
  }
  out << "PTX notes: " << ptx_notes << " (" << note_sections << " sections)\n";
  out << "ingested PTX documents: " << documents << " (" << document_sections << " sections)\n";
  char seconds_text[32];
  std::snprintf(seconds_text, sizeof seconds_text, "%.3f", seconds);
  out << "built in " << seconds_text << " s\n";
  return out.str();
}

Result<BuildReport> build_index(const KbPaths& paths, const fs::path& out) {
  auto start = std::chrono::steady_clock::now();
  BuildReport report;
  report.index_path = out;
  std::error_code error;
  fs::create_directories(out.parent_path(), error);
  if (error) {
    return make_error("cannot create the index folder " + out.parent_path().string() + ": " +
                      error.message() +
                      "; set KILN_CACHE_DIR (or --cache-dir) to a writable folder");
  }
  fs::path temp = temp_path_for(out);
  try {
    {
      Database db(temp, sqlite::OpenMode::kReadWriteCreate);
      db.exec("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA page_size = 8192;");
      db.exec(kSchema);
      db.exec("BEGIN");
      fill(db, paths, report);
      db.exec("COMMIT");
    }
    fs::rename(temp, out, error);  // atomic: readers see the old index or the new one
    if (error) throw sqlite::Error("renaming the new index into place: " + error.message());
  } catch (const std::exception& e) {
    fs::remove(temp, error);
    return make_error("building the kb index at " + out.string() + " failed: " + e.what() +
                      "; check the cache folder is writable (KILN_CACHE_DIR)");
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace kiln::kb
