#include "rt/rendezvous/store.h"

#include <algorithm>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "rt/errors.h"

namespace chorus::rt {

// ---- helpers --------------------------------------------------------------------------------

void Store::set_string(const std::string& key, const std::string& value) {
  set(key, std::vector<char>(value.begin(), value.end()));
}

std::string Store::get_string(const std::string& key, std::chrono::milliseconds timeout) {
  const auto v = get(key, timeout);
  return std::string(v.begin(), v.end());
}

void Store::barrier(const std::string& name, int world_size, std::chrono::milliseconds timeout) {
  if (add(name + "/arrived", 1) == world_size) set(name + "/done", {'1'});
  get(name + "/done", timeout);
}

void Store::barrier_naming(const std::string& name, int world_size, int rank, std::chrono::milliseconds timeout,
                           std::chrono::milliseconds report_every, const BarrierWaiting& waiting,
                           const std::function<void()>& between_polls) {
  using Clock = std::chrono::steady_clock;
  arrive(name, rank);
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  auto next_report = start + report_every;
  auto pause = std::chrono::milliseconds(1);
  // A parked get cannot be cut into slices (a store connection whose get timed out is out of
  // step), so the arrivals are polled, backing off to 50 ms.
  for (std::int64_t arrived = add(name + "/arrived", 0); arrived < world_size; arrived = add(name + "/arrived", 0)) {
    const auto now = Clock::now();
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - start);
    if (now >= deadline)
      throw TimeoutError(fmt::format("rank(s) {} did not arrive within {} ms",
                                     rank_list(missing_ranks(name, world_size)), timeout.count()));
    if (waiting && report_every.count() > 0 && now >= next_report) {
      waiting(missing_ranks(name, world_size), waited);
      next_report = now + report_every;
    }
    std::this_thread::sleep_for(std::min(pause, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now)));
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
    if (between_polls) between_polls();
  }
}

void Store::arrive(const std::string& name, int rank) {
  add(fmt::format("{}/rank/{}", name, rank), 1);
  add(name + "/arrived", 1);
}

std::vector<int> Store::missing_ranks(const std::string& name, int world_size) {
  std::vector<int> missing;
  for (int r = 0; r < world_size; ++r)
    if (add(fmt::format("{}/rank/{}", name, r), 0) == 0) missing.push_back(r);
  return missing;
}

std::string rank_list(const std::vector<int>& ranks, std::size_t limit) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size() && i < limit; ++i) out += fmt::format("{}{}", i == 0 ? "" : ", ", ranks[i]);
  if (ranks.size() > limit) out += fmt::format(" and {} more", ranks.size() - limit);
  return out;
}

std::pair<std::string, int> parse_host_port(const std::string& text, const std::string& where) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size())
    throw InputError(where, "expected host:port, got '" + text + "'");
  int port = 0;
  try {
    port = std::stoi(text.substr(colon + 1));
  } catch (const std::exception&) {
    throw InputError(where, "bad port in '" + text + "'");
  }
  if (port <= 0 || port > 65535) throw InputError(where, "port out of range in '" + text + "'");
  return {text.substr(0, colon), port};
}

// ---- in-memory store ------------------------------------------------------------------------

void InMemoryStore::set(const std::string& key, const std::vector<char>& value) {
  {
    std::lock_guard lock(mutex_);
    values_[key] = value;
  }
  cv_.notify_all();
}

std::vector<char> InMemoryStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  if (!cv_.wait_for(lock, timeout, [&] { return values_.count(key) > 0; }))
    throw TimeoutError("store: key '" + key + "' not set in time");
  return values_[key];
}

std::int64_t InMemoryStore::add(const std::string& key, std::int64_t delta) {
  std::lock_guard lock(mutex_);
  auto& v = values_[key];
  std::int64_t x = 0;
  if (v.size() == 8) std::memcpy(&x, v.data(), 8);
  x += delta;
  v.resize(8);
  std::memcpy(v.data(), &x, 8);
  cv_.notify_all();
  return x;
}

}  // namespace chorus::rt
