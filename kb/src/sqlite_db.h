// A thin RAII layer over the SQLite C API, private to kiln_kb. Failures throw
// SqliteError; the library's public functions turn them into Result errors.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kiln::kb::detail {

struct SqliteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are 1-based; text is copied, so temporaries are fine.
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
  Statement& bind(int index, double value);

  bool step();   // true while there is a row
  void run();    // step to completion, for statements without rows
  void reset();  // ready to run again; keeps nothing bound

  std::string text(int column) const;
  int64_t integer(int column) const;
  double real(int column) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class Database {
 public:
  // Opens (read_only) or creates (read-write) the file; throws SqliteError.
  Database(const std::filesystem::path& path, bool read_only);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(std::string_view sql);
  sqlite3* handle() const { return db_; }
  int64_t last_rowid() const { return sqlite3_last_insert_rowid(db_); }

 private:
  sqlite3* db_ = nullptr;
};

// Registers kiln_hits(fts_table): the distinct "column:phrase" pairs of the current
// match, space-separated, from FTS5's instance list (no re-tokenizing).
void register_fts_functions(sqlite3* db);

}  // namespace kiln::kb::detail
