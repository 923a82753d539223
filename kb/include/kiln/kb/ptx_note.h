// kiln's own PTX notes: kb/ptx/notes/ID.md, one topic per file.
//
//   # Title
//   instructions: mbarrier.init, mbarrier.try_wait.parity
//   (other `key: value` front-matter lines are kept, not interpreted)
//
//   Prose...
//   ## A section
//   ...
//
// The text before the first `## ` heading is the section "overview"; `## ` lines
// inside fenced code blocks are not headings.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/base/result.h"

namespace kiln::kb {

struct NoteSection {
  std::string slug;     // "overview", or the heading as a slug: "phase-parity"
  std::string heading;  // "Phase parity"; "Overview" for the text before the first heading
  std::string text;     // the section's lines, heading included
  int first_line = 1;   // 1-based line of the note where the section starts
};

struct PtxNote {
  std::string id;  // the file's stem: "mbarrier"
  std::string title;
  std::vector<std::string> instructions;  // PTX opcodes the note covers
  std::map<std::string, std::string> front_matter;
  std::string text;  // the whole file
  std::vector<NoteSection> sections;
};

// Fails when the first non-blank line is not a `# Title`.
Result<PtxNote> parse_ptx_note(std::string_view text, const std::string& id);

// "Phase parity & waits" -> "phase-parity-waits".
std::string slugify(std::string_view text);

}  // namespace kiln::kb
