#pragma once
// Reused byte buffers, for every layer that stages data through memory of its own: tensor
// fusion's fused buffers, the torch backend's and the Python module's staging copies of torch's
// list forms. Fresh memory costs a page fault per 4 KiB on first touch (about 3 ms per MiB on
// the CI machine kind, more than many transfers), so buffers go back to their pool when their
// handle is destroyed and the next take() of a similar size reuses them.
//
//   auto pool = rt::BufferPool::make({.max_buffers = 8, .max_bytes = 1 << 30});
//   rt::BufferPool::Buffer b = pool->take(n);   // at least n bytes, contents undefined
//   ...                                         // b's destructor gives it back (or frees it,
//                                               // if the pool is gone or full)
//
// One class; each owner keeps its own instance with its own limits. Thread-safe.
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace chorus::rt {

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  // The defaults suit staging copies (the torch backend's, the Python module's); the fusion keeps
  // more, as many buffers as a busy cycle holds.
  struct Limits {
    std::size_t max_buffers = 8;                   // free buffers kept
    std::size_t max_bytes = std::size_t{1} << 30;  // free bytes kept; a larger buffer is never kept
  };
  // What a Buffer's destructor does with its memory: back to its pool, or freed.
  struct Return {
    std::weak_ptr<BufferPool> pool;
    std::size_t capacity = 0;
    void operator()(std::byte* p) const;
  };
  using Buffer = std::unique_ptr<std::byte[], Return>;

  static std::shared_ptr<BufferPool> make(Limits limits);
  // A buffer of at least `bytes` bytes (at least 1): the smallest free one that fits and is at
  // most 4 times too big, else a new one.
  Buffer take(std::size_t bytes);
  // Free buffers and bytes held now.
  std::size_t free_buffers() const;
  std::size_t free_bytes() const;

 private:
  explicit BufferPool(Limits limits) : limits_(limits) {}
  void give(std::byte* p, std::size_t capacity);
  struct Free {
    std::unique_ptr<std::byte[]> memory;
    std::size_t capacity;
  };
  Limits limits_;
  mutable std::mutex mutex_;
  std::vector<Free> free_;  // oldest first
  std::size_t held_ = 0;    // bytes in free_
};

}  // namespace chorus::rt
