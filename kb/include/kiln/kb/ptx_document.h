// A user-supplied PTX ISA document (the HTML page NVIDIA publishes, or Markdown),
// split into sections at h1-h4 / # to #### headings, for `kiln kb ingest-ptx FILE`.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/base/result.h"
#include "kiln/kb/kb_paths.h"

namespace kiln::kb {

struct DocumentSection {
  std::string id;      // "<document>:<number or slug>", e.g. "isa:9.7.13.15.16"
  std::string number;  // "9.7.13.15.16" when the heading is numbered
  std::string title;   // the heading's text
  int level = 1;       // 1-4
  std::string text;    // the section's text up to the next heading, as plain text
  std::vector<std::string> instructions;  // opcodes named in the heading
};

// `document` names the ids' prefix. Markdown and HTML are told apart by content.
std::vector<DocumentSection> split_markdown_document(std::string_view text,
                                                     const std::string& document);
std::vector<DocumentSection> split_html_document(std::string_view text,
                                                 const std::string& document);
std::vector<DocumentSection> split_ptx_document(std::string_view text, const std::string& document);

// The opcodes a heading names: "...Instructions: mbarrier.test_wait / mbarrier.try_wait".
std::vector<std::string> heading_instructions(std::string_view heading);

// Copies `file` into paths.documents_dir() as <name>.<html|md> (temp file, then
// rename), after checking that it splits into at least one section. Returns the
// number of sections. The caller rebuilds the index afterwards.
Result<size_t> store_ptx_document(const KbPaths& paths, const std::filesystem::path& file,
                                  const std::string& name);

// The document name derived from a stored file's name: "isa.html" -> "isa".
std::string document_name(const std::filesystem::path& stored_file);

}  // namespace kiln::kb
