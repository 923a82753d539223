#include "kiln/sqlite/database.h"

namespace kiln::sqlite {
namespace {

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  throw Error(what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

}  // namespace

sqlite3_destructor_type transient() {
  return reinterpret_cast<sqlite3_destructor_type>(static_cast<intptr_t>(-1));
}

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

Statement& Statement::bind(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) fail(db_, "binding a real parameter");
  return *this;
}

Statement& Statement::bind(int index, std::optional<double> value) {
  if (value) return bind(index, *value);
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) fail(db_, "binding a NULL parameter");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, "running a statement");
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Statement::text(int column) const {
  const unsigned char* value = sqlite3_column_text(stmt_, column);
  if (!value) return "";
  return std::string(reinterpret_cast<const char*>(value),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

int64_t Statement::integer(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::real(int column) const { return sqlite3_column_double(stmt_, column); }

std::optional<double> Statement::optional_real(int column) const {
  if (sqlite3_column_type(stmt_, column) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(stmt_, column);
}

Database::Database(const std::filesystem::path& path, OpenMode mode,
                   std::chrono::milliseconds busy_timeout) {
  // FULLMUTEX: callers serialize their use of one connection, but a second layer is cheap.
  int flags = mode == OpenMode::kReadOnly ? SQLITE_OPEN_READONLY
                                          : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  flags |= SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string message =
        "opening " + path.string() + ": " + (db_ ? sqlite3_errmsg(db_) : "out of memory");
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(message);
  }
  sqlite3_busy_timeout(db_, static_cast<int>(busy_timeout.count()));
}

Database::~Database() { sqlite3_close(db_); }

void Database::exec(std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string what = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    throw Error("running `" + text.substr(0, 60) + "`: " + what);
  }
}

}  // namespace kiln::sqlite
