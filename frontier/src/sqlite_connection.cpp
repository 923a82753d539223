#include "sqlite_connection.h"

namespace kiln::frontier::detail {
namespace {

// SQLITE_TRANSIENT without the C-style cast of its macro.
sqlite3_destructor_type transient() {
  return reinterpret_cast<sqlite3_destructor_type>(static_cast<intptr_t>(-1));
}

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  throw SqliteError(what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

}  // namespace

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) !=
      SQLITE_OK)
    fail(db, "preparing `" + std::string(sql.substr(0, 60)) + "`");
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, std::string_view text) {
  if (sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), transient()) !=
      SQLITE_OK)
    fail(db_, "binding a text parameter");
  return *this;
}

Statement& Statement::bind(int index, int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK)
    fail(db_, "binding an integer parameter");
  return *this;
}

Statement& Statement::bind(int index, std::optional<double> value) {
  int rc = value ? sqlite3_bind_double(stmt_, index, *value) : sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK) fail(db_, "binding a real parameter");
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, "running a statement");
}

void Statement::run() {
  while (step()) {
  }
}

std::string Statement::text(int column) const {
  const unsigned char* value = sqlite3_column_text(stmt_, column);
  if (!value) return "";
  return std::string(reinterpret_cast<const char*>(value),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }

std::optional<double> Statement::real(int column) const {
  if (sqlite3_column_type(stmt_, column) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(stmt_, column);
}

Connection::Connection(const std::filesystem::path& path) {
  // FULLMUTEX: the store's own mutex serializes its calls, but a second layer is cheap.
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string message =
        "opening " + path.string() + ": " + (db_ ? sqlite3_errmsg(db_) : "out of memory");
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(message);
  }
  sqlite3_busy_timeout(db_, 5000);  // another kiln process may be writing the same run's store
}

Connection::~Connection() { sqlite3_close(db_); }

void Connection::exec(std::string_view sql) {
  std::string text(sql);
  char* message = nullptr;
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string what = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    throw SqliteError("running `" + text.substr(0, 60) + "`: " + what);
  }
}

}  // namespace kiln::frontier::detail
