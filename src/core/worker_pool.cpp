#include "core/worker_pool.h"

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace chorus {

void run_pool(std::size_t n, int workers, const std::atomic<bool>& stop, const std::function<void(std::size_t)>& task) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto work = [&] {
    while (!stop.load() && !failed.load()) {
      const std::size_t i = next.fetch_add(1);
      if (i >= n) return;
      try {
        task(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  const auto count = static_cast<std::size_t>(workers < 1 ? 1 : workers);
  if (count == 1) {
    work();  // on the calling thread: a serial sweep is a plain loop
  } else {
    std::vector<std::thread> threads;
    threads.reserve(count);
    for (std::size_t t = 0; t < count; ++t) threads.emplace_back(work);
    for (auto& t : threads) t.join();
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace chorus
