#include "fts_functions.h"

#include <set>
#include <string>
#include <utility>

#include "kiln/sqlite/database.h"

namespace kiln::kb::detail {
namespace {

void hits_function(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* context, int,
                   sqlite3_value**) {
  int count = 0;
  if (api->xInstCount(fts, &count) != SQLITE_OK) {
    sqlite3_result_null(context);
    return;
  }
  std::set<std::pair<int, int>> seen;
  for (int i = 0; i < count; ++i) {
    int phrase = 0, column = 0, offset = 0;
    if (api->xInst(fts, i, &phrase, &column, &offset) == SQLITE_OK) seen.insert({column, phrase});
  }
  std::string out;
  for (const auto& [column, phrase] : seen)
    out += std::to_string(column) + ":" + std::to_string(phrase) + " ";
  sqlite3_result_text(context, out.data(), static_cast<int>(out.size()), sqlite::transient());
}

fts5_api* fts5_api_of(sqlite3* db) {
  fts5_api* api = nullptr;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &stmt, nullptr) == SQLITE_OK) {
    sqlite3_bind_pointer(stmt, 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
    sqlite3_step(stmt);
  }
  sqlite3_finalize(stmt);
  return api;
}

}  // namespace

void register_fts_functions(sqlite3* db) {
  fts5_api* api = fts5_api_of(db);
  if (!api)
    throw sqlite::Error(
        "this SQLite has no FTS5; install a libsqlite3 built with FTS5 (Debian's is)");
  if (api->xCreateFunction(api, "kiln_hits", nullptr, hits_function, nullptr) != SQLITE_OK)
    throw sqlite::Error("registering the kiln_hits FTS5 function failed");
}

}  // namespace kiln::kb::detail
