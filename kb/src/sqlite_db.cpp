#include "sqlite_db.h"

#include <set>
#include <utility>

namespace kiln::kb::detail {

namespace {

// SQLITE_TRANSIENT without the C-style cast of its macro.
sqlite3_destructor_type transient() {
  return reinterpret_cast<sqlite3_destructor_type>(static_cast<intptr_t>(-1));
}

[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  throw SqliteError(what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

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
  sqlite3_result_text(context, out.data(), static_cast<int>(out.size()), transient());
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

Database::Database(const std::filesystem::path& path, bool read_only) {
  int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  flags |= SQLITE_OPEN_NOMUTEX;  // callers serialize access to one connection
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string message =
        "opening " + path.string() + ": " + (db_ ? sqlite3_errmsg(db_) : "out of memory");
    sqlite3_close(db_);
    db_ = nullptr;
    throw SqliteError(message);
  }
  sqlite3_busy_timeout(db_, 2000);
}

Database::~Database() { sqlite3_close(db_); }

void Database::exec(std::string_view sql) {
  std::string text(sql);
  char* message = nullptr;
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string what = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    throw SqliteError("running `" + text.substr(0, 60) + "`: " + what);
  }
}

void register_fts_functions(sqlite3* db) {
  fts5_api* api = fts5_api_of(db);
  if (!api)
    throw SqliteError(
        "this SQLite has no FTS5; install a libsqlite3 built with FTS5 (Debian's is)");
  if (api->xCreateFunction(api, "kiln_hits", nullptr, hits_function, nullptr) != SQLITE_OK)
    throw SqliteError("registering the kiln_hits FTS5 function failed");
}

}  // namespace kiln::kb::detail
