#pragma once
// Runs a sweep's points not yet in its database on a pool of workers, one row per point written
// as it finishes. Under several ranks (MPI), rank r runs the points whose index in the spec is r
// modulo the ranks: the split does not depend on what the database held when each rank looked.
#include <atomic>
#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweep/result_db.h"
#include "sweep/spec.h"

namespace chorus::sweep {

// Runs one point: its flattened result (see flatten.h), or an InputError whose message is the
// point's error (the row keeps it; the sweep goes on).
using PointRunner = std::function<nlohmann::ordered_json(const Point&)>;

struct Progress {
  std::size_t done = 0;   // points of this rank's share done, this run and before
  std::size_t total = 0;  // points of this rank's share
  double elapsed_s = 0;   // this run's
  double left_s = 0;      // estimated from the points' own costs (0 until one is done)
};

struct SweepOptions {
  int workers = 1;
  int rank = 0;
  int ranks = 1;
  const std::atomic<bool>* stop = nullptr;           // set: take no new point (Ctrl-C)
  std::function<void(const Progress&)> on_progress;  // after each point (serialized)
};

struct SweepSummary {
  std::size_t points = 0;   // distinct points of the spec
  std::size_t share = 0;    // of them, this rank's
  std::size_t already = 0;  // of the share, in the database before this run
  std::size_t ran = 0;      // run now
  bool stopped = false;     // `stop` was set before the share was done
};

// Where a sweep's rows go: the keys done before (the database's), their rows (for the cost
// estimate; may be empty), and the writer of each new row (thread-safe: the database, or the
// sender of a rank's rows to rank 0).
struct SweepStore {
  std::set<std::string> done;
  std::vector<Row> earlier;
  std::function<void(const Row&)> write;
};

// The distinct points of `spec` (the first of equal points) and their keys, in the spec's order.
std::vector<std::pair<std::string, const Point*>> distinct_points(const Spec& spec);

SweepSummary run_sweep(const Spec& spec, const SweepStore& store, const PointRunner& runner,
                       const SweepOptions& options);

}  // namespace chorus::sweep
