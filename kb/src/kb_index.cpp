// KbIndex: read-only queries over a built index.
#include "kiln/kb/kb_index.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "fts_functions.h"
#include "kiln/base/text.h"
#include "kiln/kb/closest_names.h"
#include "kiln/kb/fts_query.h"
#include "kiln/kb/source_set.h"
#include "kiln/sqlite/database.h"

namespace kiln::kb {

namespace fs = std::filesystem;
using json = nlohmann::json;
using sqlite::Database;
using sqlite::Statement;

namespace {

constexpr int kMaxLimit = 50;

// zoo_fts columns, in order, as named to the agent; and their BM25 weights.
const std::vector<std::string>& zoo_fields() {
  static const std::vector<std::string> fields = {
      "id",     "title",       "op",       "techniques", "technique definitions", "arch",
      "dtypes", "description", "NOTES.md", "kernel.cu",  "joined names"};
  return fields;
}
// The joined names ("splitk" for split_k) weigh as much as the id they come from.
constexpr const char* kZooRank =
    "bm25(zoo_fts, 6.0, 8.0, 4.0, 6.0, 1.0, 1.0, 1.0, 4.0, 1.5, 0.25, 6.0)";
constexpr const char* kFormRank = "bm25(ptx_form_fts, 6.0, 2.0, 3.0, 1.0, 1.0)";
// kiln's curated notes outrank an ingested document section of equal relevance.
constexpr const char* kSectionRank =
    "bm25(ptx_section_fts, 5.0, 6.0, 8.0, 1.0) * (CASE s.kind WHEN 'note_section' THEN 1.5 ELSE "
    "1.0 END)";
const std::vector<std::string>& section_fields() {
  static const std::vector<std::string> fields = {"title", "heading", "instructions", "text"};
  return fields;
}

constexpr const char* kZooFilters =
    " AND (?2 = '' OR z.op = ?2)"
    " AND (?3 = '' OR EXISTS (SELECT 1 FROM zoo_technique t WHERE t.entry = z.rowid AND "
    "t.technique = ?3))"
    " AND (?4 = '' OR z.arch = ?4)"
    " AND (?5 = '' OR EXISTS (SELECT 1 FROM zoo_dtype d WHERE d.entry = z.rowid AND d.dtype = ?5))";

// An opcode matches itself, or any longer opcode it prefixes at a '.' boundary.
constexpr const char* kOpcodeMatches =
    "(opcode = ?1 OR substr(opcode, 1, length(?1) + 1) = ?1 || '.')";
// A listed instruction matches the query either way round: a note on "mbarrier.try_wait"
// answers "mbarrier.try_wait.parity" and "mbarrier".
constexpr const char* kInstructionMatches =
    "(instruction = ?1 OR substr(instruction, 1, length(?1) + 1) = ?1 || '.'"
    " OR substr(?1, 1, length(instruction) + 1) = instruction || '.')";

// Targets of one kind listing the opcode ?1, best match first: the exact name (0), a
// more specific one (1: "mbarrier.try_wait.parity" for "mbarrier.try_wait"), a more
// general one (2: "cp.async.bulk" for "cp.async.bulk.tensor").
std::string matching_targets(const std::string& kind) {
  return "SELECT target, MIN(CASE WHEN instruction = ?1 THEN 0 WHEN substr(instruction, 1, "
         "length(?1) + 1) = ?1 || '.' "
         "THEN 1 ELSE 2 END) AS quality FROM ptx_instruction WHERE target_kind = '" +
         kind + "' AND " + kInstructionMatches + " GROUP BY target";
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  for (char c : text + ",") {
    if (c == ',') {
      if (const std::string_view name = trim(item); !name.empty()) out.emplace_back(name);
      item.clear();
    } else {
      item += c;
    }
  }
  return out;
}

std::vector<std::string> json_strings(const std::string& text) {
  std::vector<std::string> out;
  json value = json::parse(text, nullptr, false);
  if (value.is_array())
    for (const auto& item : value)
      if (item.is_string()) out.push_back(item.get<std::string>());
  return out;
}

// kiln_hits() output "col:phrase col:phrase" as (column, phrase) pairs.
std::vector<std::pair<int, int>> parse_hits(const std::string& text) {
  std::vector<std::pair<int, int>> hits;
  std::istringstream in(text);
  std::string pair;
  while (in >> pair) {
    size_t colon = pair.find(':');
    if (colon == std::string::npos) continue;
    hits.push_back({std::stoi(pair.substr(0, colon)), std::stoi(pair.substr(colon + 1))});
  }
  return hits;
}

int clamp_limit(int limit) { return std::clamp(limit, 1, kMaxLimit); }

std::string lower_trimmed(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  while (!out.empty() && (out.back() == ';' || out.back() == '.')) out.pop_back();
  while (!out.empty() && out.front() == '.') out.erase(out.begin());
  return out;
}

InstructionForm form_from_row(const Statement& row, int first) {
  InstructionForm form;
  form.opcode = row.text(first);
  form.syntax = row.text(first + 1);
  form.ptx_isa = row.text(first + 2);
  form.ptx_isa_number = static_cast<int>(row.integer(first + 3));
  form.sms = split_list(row.text(first + 4));
  form.min_sm = row.text(first + 5);
  form.modifiers = row.text(first + 6);
  form.wrapper = row.text(first + 7);
  form.signature = row.text(first + 8);
  form.header = row.text(first + 9);
  form.notes = row.text(first + 10);
  return form;
}

constexpr const char* kFormColumns =
    "f.opcode, f.syntax, f.ptx_isa, f.ptx_isa_number, f.sms, f.min_sm, f.modifiers, f.wrapper, "
    "f.signature, f.header, "
    "f.notes";

}  // namespace

KbIndex::KbIndex(fs::path path, std::unique_ptr<Database> db)
    : path_(std::move(path)), db_(std::move(db)) {}

KbIndex::~KbIndex() = default;

Result<std::unique_ptr<KbIndex>> KbIndex::open(const fs::path& path) {
  if (!fs::exists(path))
    return make_error("no kb index at " + path.string() + "; run `kiln kb build`");
  try {
    auto db = std::make_unique<Database>(path, sqlite::OpenMode::kReadOnly,
                                         std::chrono::milliseconds(2000));
    Statement format(db->handle(), "SELECT value FROM meta WHERE key = 'format'");
    if (!format.step() || format.text(0) != std::to_string(kIndexFormatVersion))
      return make_error("the kb index at " + path.string() +
                        " has another format; run `kiln kb build`");
    detail::register_fts_functions(db->handle());
    return std::unique_ptr<KbIndex>(new KbIndex(path, std::move(db)));
  } catch (const std::exception& e) {
    return make_error("cannot open the kb index at " + path.string() + " (" + e.what() +
                      "); run `kiln kb build`");
  }
}

std::string KbIndex::meta(const std::string& key) const {
  std::lock_guard lock(mutex_);
  Statement row(db_->handle(), "SELECT value FROM meta WHERE key = ?1");
  row.bind(1, key);
  return row.step() ? row.text(0) : "";
}

std::vector<std::string> KbIndex::strings(const std::string& sql) const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  Statement rows(db_->handle(), sql);
  while (rows.step()) out.push_back(rows.text(0));
  return out;
}

std::vector<std::string> KbIndex::techniques() const {
  return strings("SELECT name FROM technique ORDER BY name");
}
std::vector<std::string> KbIndex::ops() const {
  return strings("SELECT name FROM op ORDER BY name");
}
std::vector<std::string> KbIndex::archs() const {
  return strings("SELECT DISTINCT arch FROM zoo WHERE arch != '' ORDER BY arch");
}
std::vector<std::string> KbIndex::dtypes() const {
  return strings("SELECT DISTINCT dtype FROM zoo_dtype ORDER BY dtype");
}
std::vector<std::string> KbIndex::zoo_ids() const {
  return strings("SELECT id FROM zoo ORDER BY id");
}
std::vector<std::string> KbIndex::section_ids() const {
  return strings("SELECT id FROM ptx_note UNION ALL SELECT id FROM ptx_section");
}
std::vector<std::string> KbIndex::opcodes() const {
  return strings(
      "SELECT opcode FROM ptx_form UNION SELECT instruction FROM ptx_instruction ORDER BY 1");
}

Result<ZooPage> KbIndex::search_zoo(const ZooQuery& query) const {
  FtsQuery fts = make_fts_query(query.text, /*compounds=*/true);
  const bool filtered =
      !query.op.empty() || !query.technique.empty() || !query.arch.empty() || !query.dtype.empty();
  if (fts.empty() && !filtered) {
    return make_error(
        "search_zoo needs a query with at least one word, or a filter (op, technique, arch, "
        "dtype); "
        "e.g. {\"query\": \"tma multistage pipeline\"} or {\"technique\": \"wgmma\"}");
  }
  if (!query.technique.empty()) {
    auto known = techniques();
    if (!known.empty() && std::find(known.begin(), known.end(), query.technique) == known.end())
      return make_error("unknown technique `" + query.technique +
                        "`; valid techniques: " + join(known, ", "));
  }
  if (!query.op.empty()) {
    auto known = ops();
    if (!known.empty() && std::find(known.begin(), known.end(), query.op) == known.end())
      return make_error("unknown op `" + query.op + "`; valid ops: " + join(known, ", "));
  }
  try {
    return search_zoo_page(query, fts);
  } catch (const std::exception& e) {
    return make_error(std::string("kb index query failed: ") + e.what() +
                      "; run `kiln kb build` to rebuild it");
  }
}

ZooPage KbIndex::search_zoo_page(const ZooQuery& query, const FtsQuery& fts) const {
  const int limit = clamp_limit(query.limit);
  const int offset = std::max(0, query.offset);
  std::lock_guard lock(mutex_);
  ZooPage page;
  page.terms = fts.terms;
  auto bind_filters = [&](Statement& s) {
    s.bind(1, fts.expression)
        .bind(2, query.op)
        .bind(3, query.technique)
        .bind(4, query.arch)
        .bind(5, query.dtype);
  };
  const std::string from =
      fts.empty() ? " FROM zoo z WHERE 1 = 1"
                  : " FROM zoo_fts JOIN zoo z ON z.rowid = zoo_fts.rowid WHERE zoo_fts MATCH ?1";
  Statement count(db_->handle(), "SELECT count(*)" + from + kZooFilters);
  bind_filters(count);
  if (count.step()) page.total = count.integer(0);

  const std::string rank = fts.empty() ? "0.0" : kZooRank;
  Statement rows(db_->handle(), "SELECT z.rowid, " + rank +
                                    " AS score, z.id, z.title, z.op, z.arch, z.techniques, "
                                    "z.dtypes, z.description, z.measured" +
                                    from + kZooFilters +
                                    " ORDER BY score, z.id LIMIT ?6 OFFSET ?7");
  bind_filters(rows);
  rows.bind(6, limit).bind(7, offset);
  std::vector<int64_t> rowids;
  while (rows.step()) {
    ZooHit hit;
    rowids.push_back(rows.integer(0));
    hit.score = -rows.real(1);
    hit.id = rows.text(2);
    hit.title = rows.text(3);
    hit.op = rows.text(4);
    hit.arch = rows.text(5);
    hit.techniques = json_strings(rows.text(6));
    hit.dtypes = json_strings(rows.text(7));
    hit.description = rows.text(8);
    hit.measured = json::parse(rows.text(9), nullptr, false);
    if (hit.measured.is_discarded()) hit.measured = json::array();
    if (!query.op.empty()) hit.matched_filters.push_back("op=" + query.op);
    if (!query.technique.empty()) hit.matched_filters.push_back("technique=" + query.technique);
    if (!query.arch.empty()) hit.matched_filters.push_back("arch=" + query.arch);
    if (!query.dtype.empty()) hit.matched_filters.push_back("dtype=" + query.dtype);
    page.hits.push_back(std::move(hit));
  }
  if (fts.empty()) {
    for (auto& hit : page.hits) hit.snippet = hit.description;
    return page;
  }
  // Why each hit matched, and a snippet from its most telling matched column.
  Statement hits(db_->handle(),
                 "SELECT kiln_hits(zoo_fts) FROM zoo_fts WHERE zoo_fts MATCH ?1 AND rowid = ?2");
  for (size_t i = 0; i < rowids.size(); ++i) {
    ZooHit& hit = page.hits[i];
    hits.bind(1, fts.expression).bind(2, rowids[i]);
    std::vector<bool> matched_column(zoo_fields().size(), false);
    if (hits.step()) {
      for (const auto& [column, phrase] : parse_hits(hits.text(0))) {
        if (column < 0 || column >= static_cast<int>(zoo_fields().size()) || phrase < 0 ||
            phrase >= static_cast<int>(fts.terms.size()))
          continue;
        matched_column[column] = true;
        hit.matched_fields[zoo_fields()[column]].push_back(fts.terms[phrase]);
      }
    }
    hits.reset();
    int snippet_column = -1;
    for (int column : {8, 7, 9, 4}) {
      if (matched_column[column]) {
        snippet_column = column;
        break;
      }
    }
    if (snippet_column < 0) {
      hit.snippet = hit.description;
      continue;
    }
    Statement snippet(db_->handle(),
                      "SELECT snippet(zoo_fts, ?3, '«', '»', '…', 16) FROM zoo_fts "
                      "WHERE zoo_fts MATCH ?1 AND rowid = ?2");
    snippet.bind(1, fts.expression).bind(2, rowids[i]).bind(3, snippet_column);
    if (snippet.step()) hit.snippet = zoo_fields()[snippet_column] + ": " + snippet.text(0);
  }
  return page;
}

Result<PtxPage> KbIndex::search_ptx(const PtxQuery& query) const {
  const bool has_text = !make_fts_query(query.text).empty();
  const bool has_instruction = !lower_trimmed(query.instruction).empty();
  if (has_text == has_instruction) {
    return make_error(
        has_text
            ? "give either `query` (free text) or `instruction` (an opcode), not both"
            : "give `query` (free text with at least one word) or `instruction` (an opcode such "
              "as \"mbarrier.try_wait\")");
  }
  try {
    return has_instruction ? lookup_instruction(query) : search_ptx_text(query);
  } catch (const std::exception& e) {
    return make_error(std::string("kb index query failed: ") + e.what() +
                      "; run `kiln kb build` to rebuild it");
  }
}

Result<PtxPage> KbIndex::search_ptx_text(const PtxQuery& query) const {
  FtsQuery fts = make_fts_query(query.text);
  const int limit = clamp_limit(query.limit);
  const int offset = std::max(0, query.offset);
  std::lock_guard lock(mutex_);
  PtxPage page;
  page.terms = fts.terms;

  Statement form_count(db_->handle(),
                       "SELECT count(*) FROM ptx_form_fts WHERE ptx_form_fts MATCH ?1");
  form_count.bind(1, fts.expression);
  if (form_count.step()) page.total_forms = form_count.integer(0);
  Statement forms(db_->handle(),
                  std::string("SELECT ") + kFormColumns + ", " + kFormRank +
                      " AS score FROM ptx_form_fts JOIN ptx_form f ON f.rowid = ptx_form_fts.rowid "
                      "WHERE ptx_form_fts MATCH ?1 ORDER BY score, f.rowid LIMIT ?2 OFFSET ?3");
  forms.bind(1, fts.expression).bind(2, limit).bind(3, offset);
  while (forms.step()) page.forms.push_back(form_from_row(forms, 0));

  Statement section_count(db_->handle(),
                          "SELECT count(*) FROM ptx_section_fts WHERE ptx_section_fts MATCH ?1");
  section_count.bind(1, fts.expression);
  if (section_count.step()) page.total_sections = section_count.integer(0);
  Statement sections(
      db_->handle(),
      std::string("SELECT s.id, s.kind, s.title, s.instructions, ") + kSectionRank +
          " AS score, snippet(ptx_section_fts, 3, '«', '»', '…', 20), kiln_hits(ptx_section_fts), "
          "s.requires "
          "FROM ptx_section_fts JOIN ptx_section s ON s.rowid = ptx_section_fts.rowid "
          "WHERE ptx_section_fts MATCH ?1 ORDER BY score, s.rowid LIMIT ?2 OFFSET ?3");
  sections.bind(1, fts.expression).bind(2, limit).bind(3, offset);
  while (sections.step()) {
    PtxSectionHit hit;
    hit.id = sections.text(0);
    hit.kind = sections.text(1);
    hit.title = sections.text(2);
    hit.instructions = split_list(sections.text(3));
    hit.score = -sections.real(4);
    hit.snippet = sections.text(5);
    hit.requirements = sections.text(7);
    std::vector<bool> seen(section_fields().size(), false);
    for (const auto& [column, phrase] : parse_hits(sections.text(6))) {
      if (column >= 0 && column < static_cast<int>(seen.size()) && !seen[column]) {
        seen[column] = true;
        hit.matched.push_back(section_fields()[column]);
      }
    }
    page.sections.push_back(std::move(hit));
  }
  return page;
}

Result<PtxPage> KbIndex::lookup_instruction(const PtxQuery& query) const {
  const std::string wanted = lower_trimmed(query.instruction);
  const int limit = clamp_limit(query.limit);
  const int offset = std::max(0, query.offset);
  std::unique_lock lock(mutex_);
  PtxPage page;

  // Notes and document sections that list the opcode, a prefix of it or an extension of it.
  std::vector<PtxSectionHit> all_sections;
  Statement notes(db_->handle(),
                  std::string("SELECT n.id, n.title, n.instructions, n.sections, n.requires "
                              "FROM ptx_note n JOIN (") +
                      matching_targets("note") + ") m ON m.target = n.id ORDER BY m.quality, n.id");
  notes.bind(1, wanted);
  while (notes.step()) {
    PtxSectionHit hit;
    hit.id = notes.text(0);
    hit.kind = "note";
    hit.title = notes.text(1);
    hit.instructions = split_list(notes.text(2));
    hit.subsections = json_strings(notes.text(3));
    hit.requirements = notes.text(4);
    hit.matched.push_back("instructions");
    all_sections.push_back(std::move(hit));
  }
  Statement documents(
      db_->handle(), std::string("SELECT s.id, s.title, s.instructions FROM ptx_section s JOIN (") +
                         matching_targets("section") +
                         ") m ON m.target = s.id ORDER BY m.quality, s.rowid");
  documents.bind(1, wanted);
  while (documents.step()) {
    PtxSectionHit hit;
    hit.id = documents.text(0);
    hit.kind = "document";
    hit.title = documents.text(1);
    hit.instructions = split_list(documents.text(2));
    hit.matched.push_back("heading");
    all_sections.push_back(std::move(hit));
  }

  // Forms: the opcode as given, else shorter prefixes ("mbarrier.try_wait.parity.acquire"
  // -> "mbarrier.try_wait.parity"), but never shorter than the longest listed name that
  // prefixes it: a note on exactly "cp.async.wait_group" means its forms are not those
  // of "cp.async.bulk".
  std::string floor;
  Statement listed(db_->handle(), std::string("SELECT instruction FROM ptx_instruction WHERE ") +
                                      kInstructionMatches);
  listed.bind(1, wanted);
  while (listed.step()) {
    std::string name = listed.text(0);
    bool prefixes = name == wanted || wanted.compare(0, name.size() + 1, name + ".") == 0;
    if (prefixes && name.size() > floor.size()) floor = name;
  }
  Statement count(db_->handle(),
                  std::string("SELECT count(*) FROM ptx_form WHERE ") + kOpcodeMatches);
  for (std::string candidate = wanted; !candidate.empty() && candidate.size() >= floor.size();) {
    count.bind(1, candidate);
    page.total_forms = count.step() ? count.integer(0) : 0;
    count.reset();
    if (page.total_forms > 0) {
      page.instruction = candidate;
      break;
    }
    size_t dot = candidate.rfind('.');
    candidate = dot == std::string::npos ? "" : candidate.substr(0, dot);
  }
  if (page.total_forms == 0 && all_sections.empty()) {
    lock.unlock();
    auto suggestions = closest_names(wanted, opcodes(), 8);
    return make_error("no PTX instruction `" + query.instruction +
                      "` in the kb (CCCL wrapper forms, kiln's notes, " +
                      "ingested PTX ISA documents)" +
                      (suggestions.empty() ? "" : "; close opcodes: " + join(suggestions, ", ")) +
                      "; or search free text with {\"query\": \"...\"}");
  }
  if (page.instruction.empty()) page.instruction = wanted;
  Statement forms(db_->handle(),
                  std::string("SELECT ") + kFormColumns + " FROM ptx_form f WHERE " +
                      kOpcodeMatches +
                      " ORDER BY f.ptx_isa_number, f.opcode, f.rowid LIMIT ?2 OFFSET ?3");
  forms.bind(1, page.instruction).bind(2, limit).bind(3, offset);
  while (forms.step()) page.forms.push_back(form_from_row(forms, 0));
  page.total_sections = static_cast<int64_t>(all_sections.size());
  for (size_t i = offset;
       i < all_sections.size() && page.sections.size() < static_cast<size_t>(limit); ++i)
    page.sections.push_back(std::move(all_sections[i]));
  return page;
}

std::optional<SectionText> KbIndex::read_section(const std::string& id) const {
  std::lock_guard lock(mutex_);
  Statement note(
      db_->handle(),
      "SELECT id, title, instructions, path, text, sections, requires FROM ptx_note WHERE id = ?1");
  note.bind(1, id);
  if (note.step()) {
    return SectionText{note.text(0),
                       "note",
                       note.text(1),
                       note.text(4),
                       note.text(3),
                       note.text(6),
                       split_list(note.text(2)),
                       json_strings(note.text(5))};
  }
  Statement section(
      db_->handle(),
      "SELECT id, kind, title, instructions, path, text, requires FROM ptx_section WHERE id = ?1");
  section.bind(1, id);
  if (section.step()) {
    return SectionText{section.text(0),
                       section.text(1),
                       section.text(2),
                       section.text(5),
                       section.text(4),
                       section.text(6),
                       split_list(section.text(3)),
                       {}};
  }
  return std::nullopt;
}

}  // namespace kiln::kb
