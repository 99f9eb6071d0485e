#include "sweep/result_db.h"

#include <sqlite3.h>

#include <fmt/format.h>

#include "core/error.h"

namespace chorus::sweep {
namespace {

// A statement, finalized when it goes out of scope.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::string& path) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
      throw InputError(path, fmt::format("SQLite: {}", sqlite3_errmsg(db)));
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* get() const { return stmt_; }
  void text(int i, const std::string& s) const { sqlite3_bind_text(stmt_, i, s.c_str(), -1, SQLITE_TRANSIENT); }
  std::string column(int i) const {
    const auto* t = sqlite3_column_text(stmt_, i);
    return t ? reinterpret_cast<const char*>(t) : "";
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

std::string quoted(const std::string& name) {
  std::string q = "\"";
  for (char c : name) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string json_path(const std::string& name) {
  std::string p = "'$.\"";
  for (char c : name) p += c == '\'' ? std::string("''") : std::string(1, c);
  return p + "\"'";
}

}  // namespace

ResultDb::ResultDb(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw InputError(path, fmt::format("cannot open the database: {}", msg));
  }
  try {
    sqlite3_busy_timeout(db_, 60'000);  // another writer holds the lock: wait, up to a minute
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=NORMAL");  // WAL: a committed row survives a killed process
    exec(
        "CREATE TABLE IF NOT EXISTS points (key TEXT PRIMARY KEY, command TEXT NOT NULL, params TEXT NOT NULL, "
        "metrics TEXT NOT NULL, error TEXT NOT NULL, seconds REAL NOT NULL, rank INTEGER NOT NULL, "
        "finished TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)");
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

ResultDb::~ResultDb() { sqlite3_close(db_); }

void ResultDb::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw InputError(path_, fmt::format("SQLite: {}", msg));
  }
}

void ResultDb::insert(const Row& row) {
  const std::lock_guard<std::mutex> lock(mutex_);
  Statement s(db_,
              "INSERT OR IGNORE INTO points (key, command, params, metrics, error, seconds, rank) "
              "VALUES (?, ?, ?, ?, ?, ?, ?)",
              path_);
  s.text(1, row.key);
  s.text(2, row.command);
  s.text(3, row.params.dump());
  s.text(4, row.metrics.dump());
  s.text(5, row.error);
  sqlite3_bind_double(s.get(), 6, row.seconds);
  sqlite3_bind_int(s.get(), 7, row.rank);
  if (sqlite3_step(s.get()) != SQLITE_DONE) throw InputError(path_, fmt::format("SQLite: {}", sqlite3_errmsg(db_)));
}

std::set<std::string> ResultDb::keys() {
  const std::lock_guard<std::mutex> lock(mutex_);
  Statement s(db_, "SELECT key FROM points", path_);
  std::set<std::string> out;
  while (sqlite3_step(s.get()) == SQLITE_ROW) out.insert(s.column(0));
  return out;
}

std::map<std::string, Row> ResultDb::rows(const std::set<std::string>& keys) {
  const std::lock_guard<std::mutex> lock(mutex_);
  Statement s(db_, "SELECT key, command, params, metrics, error, seconds, rank FROM points", path_);
  std::map<std::string, Row> out;
  int rc = 0;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    Row r;
    r.key = s.column(0);
    if (!keys.count(r.key)) continue;
    r.command = s.column(1);
    r.params = nlohmann::ordered_json::parse(s.column(2));
    r.metrics = nlohmann::ordered_json::parse(s.column(3));
    r.error = s.column(4);
    r.seconds = sqlite3_column_double(s.get(), 5);
    r.rank = sqlite3_column_int(s.get(), 6);
    out.emplace(r.key, std::move(r));
  }
  if (rc != SQLITE_DONE) throw InputError(path_, fmt::format("SQLite: {}", sqlite3_errmsg(db_)));
  return out;
}

void ResultDb::make_view(const std::vector<std::string>& params,
                         const std::vector<std::pair<std::string, std::string>>& metrics) {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::string cols = "key";
  for (const auto& p : params) cols += fmt::format(", json_extract(params, {}) AS {}", json_path(p), quoted(p));
  for (const auto& [column, key] : metrics)
    cols += fmt::format(", json_extract(metrics, {}) AS {}", json_path(key), quoted(column));
  exec("BEGIN IMMEDIATE");
  try {
    exec("DROP VIEW IF EXISTS results");
    exec(fmt::format("CREATE VIEW results AS SELECT {}, error, seconds, rank FROM points", cols));
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

}  // namespace chorus::sweep
