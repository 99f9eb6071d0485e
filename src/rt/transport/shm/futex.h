#pragma once
// Cross-process waiting on 32-bit counters in shared memory (Linux futex), and peer liveness.
#include <atomic>
#include <cstdint>

namespace chorus::rt {

// A counter in shared memory that other processes can sleep on. Not padded: whoever embeds it
// decides what shares its cache line (shm publishes a collective's signature beside its steps).
struct SharedCounter {
  std::atomic<std::uint32_t> value{0};
  std::atomic<std::uint32_t> sleepers{0};
  // Publishes a new value and wakes sleepers, if any.
  void store_and_wake(std::uint32_t v);
};

// Sleeps until *word != expected, a wake-up, or `timeout_us`.
void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, long timeout_us);
void futex_wake_all(std::atomic<std::uint32_t>* word);

// True if the process is gone (or a zombie).
bool process_dead(int pid);

}  // namespace chorus::rt
