// The line a gloo rank prints once when a collective has waited long inside Gloo (WaitNotice,
// gloo_backend.h): which operation, its flight-recorder seq, and the ranks that have not reached
// it when the store can tell.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "rt/backends/gloo/gloo_backend.h"
#include "rt/diagnostics/flight_recorder.h"
#include "rt/rendezvous/store.h"
#include "rt/runtime_config.h"
#include "rt/work.h"

namespace chorus::rt::gloo_backend {

namespace {

constexpr auto kPeriod = std::chrono::milliseconds(200);  // how often the watch looks

}  // namespace

WaitNotice::WaitNotice(int rank, int size, std::chrono::milliseconds timeout, std::weak_ptr<Store> store,
                       std::string key_prefix)
    : rank_(rank), size_(size), timeout_(timeout), store_(std::move(store)), key_prefix_(std::move(key_prefix)) {
  thread_ = std::thread([this] { watch(); });
}

WaitNotice::~WaitNotice() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

bool WaitNotice::begin(const char* what, bool agreement, int peer) {
  const FlightEntry* e = t_flight_entry;
  const std::int64_t seq = e != nullptr ? e->seq.load(std::memory_order_relaxed) : -1;
  // Point to point: the application's (a send or recv entry, seq -1), or, without a record, any.
  if (e != nullptr ? seq < 0 : peer >= 0) return false;
  // Without a record, every wait is a collective of its own (the agreement and its call are two).
  const std::int64_t key = seq >= 0 ? seq : -2 - unrecorded_.fetch_add(1, std::memory_order_relaxed);
  const std::int64_t now = steady_now_ns();
  if (key != key_.load(std::memory_order_relaxed)) {
    // (the kinds' names are string literals)
    const auto kind = static_cast<CollectiveKind>(e != nullptr ? e->kind.load(std::memory_order_relaxed) & 0xff : 0);
    op_.store(e != nullptr ? to_string(kind).data() : what, std::memory_order_relaxed);
    seq_.store(seq, std::memory_order_relaxed);
    since_ns_.store(now, std::memory_order_relaxed);
    key_.store(key, std::memory_order_release);
  } else if (agreement_.load(std::memory_order_relaxed) && !agreement) {
    agreed_key_.store(key, std::memory_order_relaxed);  // the call after its agreement
  }
  agreement_.store(agreement, std::memory_order_relaxed);
  phase_ns_.store(now, std::memory_order_relaxed);
  in_flight_.fetch_add(1, std::memory_order_release);
  return true;
}

void WaitNotice::mark(std::int64_t seq) {
  const auto store = store_.lock();
  if (store == nullptr || seq + 1 <= marked_) return;
  try {
    store->add(fmt::format("{}/at/{}", key_prefix_, rank_), seq + 1 - marked_);
    marked_ = seq + 1;
  } catch (const std::exception&) {
    // the store is gone (the job is ending): nothing to publish
  }
}

std::string WaitNotice::who(std::int64_t seq, bool agreement, bool agreed) {
  if (!agreement && agreed)
    return "; every rank reached it (its agreement passed) and Gloo does not tell which one it waits for";
  const auto store = store_.lock();
  if (store == nullptr || seq < 0) return "; Gloo does not tell which rank it waits for";
  // A peer that reached the call shortly before this rank looked publishes its seq within a
  // quarter of the threshold: look twice, that long apart.
  std::vector<int> behind;
  try {
    for (int look = 0; look < 2; ++look) {
      if (look == 1) std::this_thread::sleep_for(wait_report_after(timeout_) / 4 + 2 * kPeriod);
      behind.clear();
      for (int p = 0; p < size_; ++p)
        if (p != rank_ && store->add(fmt::format("{}/at/{}", key_prefix_, p), 0) < seq + 1) behind.push_back(p);
      if (behind.empty()) break;
    }
  } catch (const std::exception&) {
    return "; Gloo does not tell which rank it waits for";
  }
  if (behind.empty()) return "; every rank reached it and Gloo does not tell which one it waits for";
  const char* verb = agreement ? "not reached it" : "not been seen waiting in it (not reached, or past their part)";
  return fmt::format("; rank{} {} {} {}", behind.size() > 1 ? "s" : "", rank_list(behind),
                     behind.size() > 1 ? "have" : "has", verb);
}

void WaitNotice::watch() {
  const std::int64_t mark_after_ns = std::chrono::nanoseconds(wait_report_after(timeout_) / 4).count();
  const std::int64_t say_after_ns = std::chrono::nanoseconds(wait_report_after(timeout_)).count();
  std::int64_t said_key = -1;
  std::unique_lock lock(mutex_);
  while (!stop_) {
    cv_.wait_for(lock, kPeriod);
    if (stop_ || in_flight_.load(std::memory_order_acquire) == 0) continue;
    const std::int64_t key = key_.load(std::memory_order_acquire);
    const std::int64_t seq = seq_.load(std::memory_order_relaxed);
    const std::int64_t waited = steady_now_ns() - since_ns_.load(std::memory_order_relaxed);
    lock.unlock();
    if (seq >= 0 && waited >= mark_after_ns) mark(seq);
    if (key != said_key && waited >= say_after_ns) {
      said_key = key;
      const bool agreement = agreement_.load(std::memory_order_relaxed);
      const std::string whom = who(seq, agreement, agreed_key_.load(std::memory_order_relaxed) == key);
      // (after who()'s second look: the wait as it is now)
      const std::int64_t now = steady_now_ns();
      const double so_far = static_cast<double>(now - since_ns_.load(std::memory_order_relaxed)) / 1e9;
      const double left =
          static_cast<double>(phase_ns_.load(std::memory_order_relaxed) + timeout_.count() * 1'000'000 - now) / 1e9;
      const std::string seq_text = seq >= 0 ? fmt::format(" seq {}", seq) : std::string(" (not recorded: no seq)");
      if (key_.load(std::memory_order_acquire) == key && in_flight_.load(std::memory_order_acquire) > 0)
        std::fprintf(stderr, "chorus rt: gloo %s%s: rank %d waiting (%.0f s so far; gives up in %.0f s)%s\n",
                     op_.load(std::memory_order_relaxed), seq_text.c_str(), rank_, so_far, left > 0 ? left : 0.0,
                     whom.c_str());
    }
    lock.lock();
  }
}

}  // namespace chorus::rt::gloo_backend
