#include "sweep/ranked_sweep.h"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <fmt/format.h>
#include <mutex>
#include <thread>

namespace chorus::sweep {
namespace {

constexpr int kTagRow = 1;   // a row as JSON
constexpr int kTagDone = 2;  // a rank has run its share (or was stopped)

nlohmann::ordered_json row_json(const Row& r) {
  return {{"key", r.key},     {"command", r.command}, {"params", r.params}, {"metrics", r.metrics},
          {"error", r.error}, {"seconds", r.seconds}, {"rank", r.rank}};
}

Row row_of(const std::string& text) {
  const auto j = nlohmann::ordered_json::parse(text);
  return Row{j.at("key"),   j.at("command"), j.at("params"), j.at("metrics"),
             j.at("error"), j.at("seconds"), j.at("rank")};
}

SweepStore store_of(ResultDb& db) {
  SweepStore store;
  store.done = db.keys();
  for (auto& [key, row] : db.rows(store.done)) store.earlier.push_back(std::move(row));
  store.write = [&db](const Row& r) { db.insert(r); };
  return store;
}

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : 0;
}

// Rank 0's done keys to every rank (16 hex digits each, concatenated).
std::set<std::string> broadcast_keys(const std::set<std::string>& keys, int rank) {
  std::string all;
  if (rank == 0)
    for (const auto& k : keys) all += k;
  unsigned long long n = all.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  all.resize(n);
  MPI_Bcast(all.data(), static_cast<int>(n), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::set<std::string> out;
  for (std::size_t i = 0; i + 16 <= all.size(); i += 16) out.insert(all.substr(i, 16));
  return out;
}

// Runs the share on a thread of its own, so that this (the MPI) thread can send or receive rows.
class ShareThread {
 public:
  ShareThread(const Spec& spec, const SweepStore& store, const PointRunner& runner, const SweepOptions& options)
      : thread_([this, &spec, &store, &runner, &options] {
          try {
            summary_ = run_sweep(spec, store, runner, options);
          } catch (const std::exception& e) {
            fmt::print(stderr, "chorus: sweep, rank {}: {}\n", options.rank, e.what());
            std::fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, 1);  // the others would wait for this rank for ever
          }
          finished_ = true;
        }) {}
  ~ShareThread() {
    if (thread_.joinable()) thread_.join();
  }
  ShareThread(const ShareThread&) = delete;
  ShareThread& operator=(const ShareThread&) = delete;
  bool finished() const { return finished_.load(); }
  SweepSummary join() {
    thread_.join();
    return summary_;
  }

 private:
  std::atomic<bool> finished_{false};
  SweepSummary summary_;
  std::thread thread_;
};

// Rank 0: writes its rows and receives the others', until every rank has said it is done.
SweepSummary run_writer(const Spec& spec, ResultDb& db, const PointRunner& runner, const SweepOptions& options) {
  SweepStore store = store_of(db);
  broadcast_keys(store.done, 0);
  ShareThread share(spec, store, runner, options);
  int done_ranks = 0;
  while (!share.finished() || done_ranks < options.ranks - 1) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    if (!flag) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    int n = 0;
    MPI_Get_count(&status, MPI_CHAR, &n);
    std::string text(static_cast<std::size_t>(n), '\0');
    MPI_Recv(text.data(), n, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (status.MPI_TAG == kTagDone)
      ++done_ranks;
    else
      db.insert(row_of(text));
  }
  return share.join();
}

// Ranks 1..R-1: send each row to rank 0 as it finishes, then say done.
SweepSummary run_sender(const Spec& spec, const PointRunner& runner, const SweepOptions& options) {
  SweepStore store;
  store.done = broadcast_keys({}, options.rank);
  std::mutex mutex;
  std::deque<std::string> queue;
  store.write = [&](const Row& r) {
    const std::lock_guard<std::mutex> lock(mutex);
    queue.push_back(row_json(r).dump());
  };
  ShareThread share(spec, store, runner, options);
  for (;;) {
    const bool finished = share.finished();  // read before the queue: rows queued before it are sent
    std::deque<std::string> batch;
    {
      const std::lock_guard<std::mutex> lock(mutex);
      batch.swap(queue);
    }
    for (auto& text : batch) MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, 0, kTagRow, MPI_COMM_WORLD);
    if (finished && batch.empty()) break;
    if (batch.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  MPI_Send(nullptr, 0, MPI_CHAR, 0, kTagDone, MPI_COMM_WORLD);
  return share.join();
}

}  // namespace

RankedSweep run_ranked_sweep(const Spec& spec, const std::string& db_path, const PointRunner& runner,
                             const SweepOptions& options) {
  RankedSweep out;
  if (env_int("OMPI_COMM_WORLD_SIZE") <= 1) {
    out.writer = std::make_unique<ResultDb>(db_path);
    const auto s = run_sweep(spec, store_of(*out.writer), runner, options);
    out.ran = s.ran;
    out.already = s.already;
    out.stopped = s.stopped;
    return out;
  }
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  SweepOptions o = options;
  MPI_Comm_rank(MPI_COMM_WORLD, &o.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &o.ranks);
  out.ranks = o.ranks;
  SweepSummary s;
  if (o.rank == 0) {
    try {
      out.writer = std::make_unique<ResultDb>(db_path);
    } catch (const std::exception& e) {
      fmt::print(stderr, "chorus: error: {}\n", e.what());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    s = run_writer(spec, *out.writer, runner, o);
  } else {
    s = run_sender(spec, runner, o);
  }
  unsigned long long mine[2] = {s.ran, s.already}, sums[2] = {0, 0};
  MPI_Reduce(mine, sums, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  int stopped = s.stopped ? 1 : 0, any_stopped = 0;
  MPI_Allreduce(&stopped, &any_stopped, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  out.ran = sums[0];
  out.already = sums[1];
  out.stopped = any_stopped != 0;
  return out;
}

}  // namespace chorus::sweep
