// kiln's own FTS5 function for the knowledge-base index, private to kiln_kb.
#pragma once

#include <sqlite3.h>

namespace kiln::kb::detail {

// Registers kiln_hits(fts_table): the distinct "column:phrase" pairs of the current
// match, space-separated, from FTS5's instance list (no re-tokenizing). Throws
// sqlite::Error when this SQLite has no FTS5.
void register_fts_functions(sqlite3* db);

}  // namespace kiln::kb::detail
