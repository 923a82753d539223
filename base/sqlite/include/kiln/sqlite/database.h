// A thin RAII layer over the SQLite C API, shared by the knowledge-base index (kb/) and the
// result store (frontier/). Failures throw sqlite::Error; each library turns them into
// Result errors at its boundary.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kiln::sqlite {

struct Error : std::runtime_error {
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
  Statement& bind(int index, std::optional<double> value);  // nullopt binds NULL

  bool step();   // true while there is a row
  void run();    // step to completion, for statements without rows
  void reset();  // ready to run again; keeps nothing bound

  std::string text(int column) const;  // "" for NULL
  int64_t integer(int column) const;
  double real(int column) const;                          // 0 for NULL
  std::optional<double> optional_real(int column) const;  // nullopt for NULL

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

enum class OpenMode { kReadOnly, kReadWriteCreate };

class Database {
 public:
  // Opens the file (creating it in kReadWriteCreate). `busy_timeout`: how long a statement
  // waits for another process's lock on the same file. Throws Error.
  Database(const std::filesystem::path& path, OpenMode mode,
           std::chrono::milliseconds busy_timeout = std::chrono::milliseconds(5000));
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  void exec(std::string_view sql);
  sqlite3* handle() const { return db_; }
  int64_t last_rowid() const { return sqlite3_last_insert_rowid(db_); }

 private:
  sqlite3* db_ = nullptr;
};

// SQLITE_TRANSIENT (SQLite copies the value) without the C-style cast of its macro.
sqlite3_destructor_type transient();

}  // namespace kiln::sqlite
