#pragma once
// POSIX shared-memory segments and cross-process waiting on 32-bit counters (futex).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace chorus::rt {

class ShmSegment {
 public:
  ShmSegment() = default;
  // Creates (exclusive) or opens the named segment of `bytes` and maps it.
  static ShmSegment create(const std::string& name, std::size_t bytes);
  static ShmSegment open(const std::string& name, std::size_t bytes);
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ~ShmSegment();
  char* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  // Removes the name; the mapping stays valid until every process unmaps it.
  void unlink();

 private:
  static ShmSegment map(const std::string& name, std::size_t bytes, bool create);
  std::string name_;
  char* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// A counter in shared memory that other processes can sleep on.
struct alignas(64) SharedCounter {
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
