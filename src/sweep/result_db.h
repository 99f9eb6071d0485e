#pragma once
// A sweep's results in SQLite: one row per point, keyed by the point's key, each written in its
// own transaction (whole or not at all), in WAL mode with a busy timeout so that several sweeps
// (threads, processes, MPI ranks) can write one file. The view `results` has a column per
// parameter and metric.
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

struct sqlite3;

namespace chorus::sweep {

struct Row {
  std::string key;
  std::string command;
  nlohmann::ordered_json params;   // name -> value text
  nlohmann::ordered_json metrics;  // flattened --json result (empty when the point failed)
  std::string error;               // why the point failed ("" when it ran)
  double seconds = 0;              // the point's own run time
  int rank = 0;                    // the MPI rank that ran it
};

class ResultDb {
 public:
  explicit ResultDb(const std::string& path);  // opens or creates; InputError naming the path
  ~ResultDb();
  ResultDb(const ResultDb&) = delete;
  ResultDb& operator=(const ResultDb&) = delete;

  // Inserts `row` unless its key is there (the first row of a point stays). Thread-safe.
  void insert(const Row& row);
  // The keys of every row held.
  std::set<std::string> keys();
  // The rows of `keys` that the database holds, by key.
  std::map<std::string, Row> rows(const std::set<std::string>& keys);
  // (Re)creates the view `results`: key, the parameters, the metrics (column, key in the metrics)
  // as columns, error, seconds, rank.
  void make_view(const std::vector<std::string>& params,
                 const std::vector<std::pair<std::string, std::string>>& metrics);

 private:
  void exec(const std::string& sql);
  std::string path_;
  sqlite3* db_ = nullptr;
  std::mutex mutex_;
};

}  // namespace chorus::sweep
