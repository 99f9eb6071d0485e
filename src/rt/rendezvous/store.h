#pragma once
// The rendezvous key-value store shared by all ranks of a run (interface, helpers, and the
// in-process store). Backends use it to exchange addresses and names; tcp_store.h serves it
// between processes.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace chorus::rt {

class Store {
 public:
  virtual ~Store() = default;
  virtual void set(const std::string& key, const std::vector<char>& value) = 0;
  // Blocks until `key` exists or `timeout` passes (then throws TimeoutError).
  virtual std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout) = 0;
  // Atomically adds `delta` to the integer stored at `key` (0 if absent); returns the sum.
  virtual std::int64_t add(const std::string& key, std::int64_t delta) = 0;

  // Helpers built on the three primitives.
  void set_string(const std::string& key, const std::string& value);
  std::string get_string(const std::string& key, std::chrono::milliseconds timeout);
  // All `world_size` callers return once every one has arrived (one-shot per name).
  void barrier(const std::string& name, int world_size, std::chrono::milliseconds timeout);
  // As barrier(), for callers that know their rank and may wait long (finalize): it polls
  // instead of parking a get, calls `waiting(missing ranks, waited)` every `report_every`
  // while it waits and `between_polls()` before every poll, and its TimeoutError names the
  // ranks that never arrived.
  using BarrierWaiting = std::function<void(const std::vector<int>& missing, std::chrono::milliseconds waited)>;
  void barrier_naming(const std::string& name, int world_size, int rank, std::chrono::milliseconds timeout,
                      std::chrono::milliseconds report_every, const BarrierWaiting& waiting,
                      const std::function<void()>& between_polls = {});
  // Counts `rank` as arrived at barrier_naming(name) without waiting for the others: a rank
  // that leaves anyway (a broken runtime's finalize) spares its peers a wait to their deadline.
  void arrive(const std::string& name, int rank);
  // The ranks of [0, world_size) that have not reached barrier_naming(name) yet.
  std::vector<int> missing_ranks(const std::string& name, int world_size);
};

// "2, 5, 7" (at most `limit` ranks, then "and N more").
std::string rank_list(const std::vector<int>& ranks, std::size_t limit = 16);

// A store inside one process (world size 1, and tests that run ranks as threads).
class InMemoryStore : public Store {
 public:
  void set(const std::string& key, const std::vector<char>& value) override;
  std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<char>> values_;
};

// Parses "host:port"; throws InputError naming `where`.
std::pair<std::string, int> parse_host_port(const std::string& text, const std::string& where);

}  // namespace chorus::rt
