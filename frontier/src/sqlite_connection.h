// A thin RAII layer over the SQLite C API, private to kiln_frontier. Failures throw
// SqliteError; ResultStore turns them into Result errors at its boundary.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kiln::frontier::detail {

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
  Statement& bind(int index, std::optional<double> value);  // nullopt binds NULL

  bool step();  // true while there is a row
  void run();   // to completion, for statements without rows

  std::string text(int column) const;
  int64_t integer(int column) const;
  std::optional<double> real(int column) const;  // nullopt for NULL

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

class Connection {
 public:
  explicit Connection(const std::filesystem::path& path);  // opens or creates; throws SqliteError
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void exec(std::string_view sql);
  sqlite3* handle() const { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace kiln::frontier::detail
