#pragma once
// Ranks as threads: spawn(n, backends, fn) runs fn(runtime, rank) on n threads of this process,
// each with its own chorus::rt::Runtime over one in-process store (an ExternalWorld), as Gloo's
// tests run ranks (gloo/test/base_test.h). The first exception of any rank is rethrown here
// after every thread has ended.
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rt/rendezvous/store.h"
#include "rt/runtime_instance.h"

namespace chorus::rt::testing {

inline void spawn(int n, const std::vector<std::string>& backends, const std::function<void(Runtime&, int)>& fn,
                  double timeout_s = 60, const InitOptions& base = {}) {
  auto store = std::make_shared<InMemoryStore>();
  std::mutex mutex;
  std::exception_ptr first;
  std::vector<std::thread> threads;
  for (int rank = 0; rank < n; ++rank)
    threads.emplace_back([&, rank] {
      try {
        InitOptions options = base;
        options.timeout_s = timeout_s;
        options.world = std::make_shared<ExternalWorld>(ExternalWorld{rank, n, store});
        Runtime runtime(backends, options);
        fn(runtime, rank);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!first) first = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace chorus::rt::testing
