#include "rt/buffer_pool.h"

#include <algorithm>

namespace chorus::rt {

std::shared_ptr<BufferPool> BufferPool::make(Limits limits) {
  return std::shared_ptr<BufferPool>(new BufferPool(limits));
}

BufferPool::Buffer BufferPool::take(std::size_t bytes) {
  bytes = std::max<std::size_t>(bytes, 1);
  {
    std::lock_guard lock(mutex_);
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->capacity >= bytes && it->capacity / 4 <= bytes && (best == free_.end() || it->capacity < best->capacity))
        best = it;
    if (best != free_.end()) {
      const std::size_t capacity = best->capacity;
      std::byte* p = best->memory.release();
      held_ -= capacity;
      free_.erase(best);
      return Buffer(p, Return{weak_from_this(), capacity});
    }
  }
  return Buffer(new std::byte[bytes], Return{weak_from_this(), bytes});
}

void BufferPool::Return::operator()(std::byte* p) const {
  if (p == nullptr) return;
  if (auto owner = pool.lock()) return owner->give(p, capacity);
  delete[] p;
}

void BufferPool::give(std::byte* p, std::size_t capacity) {
  std::unique_ptr<std::byte[]> memory(p);
  if (capacity > limits_.max_bytes) return;  // too big to keep: freed here
  std::unique_lock lock(mutex_);
  free_.push_back({std::move(memory), capacity});
  held_ += capacity;
  // Over a limit: the oldest go first (the sizes in use change over a run; the newest match).
  std::vector<Free> dropped;  // freed after the lock
  while (free_.size() > limits_.max_buffers || held_ > limits_.max_bytes) {
    held_ -= free_.front().capacity;
    dropped.push_back(std::move(free_.front()));
    free_.erase(free_.begin());
  }
  lock.unlock();
}

std::size_t BufferPool::free_buffers() const {
  std::lock_guard lock(mutex_);
  return free_.size();
}

std::size_t BufferPool::free_bytes() const {
  std::lock_guard lock(mutex_);
  return held_;
}

}  // namespace chorus::rt
