// rt/buffer_pool.h: the one pool of reused byte buffers.
#include <gtest/gtest.h>

#include <cstddef>

#include "rt/buffer_pool.h"

using chorus::CollectiveKind;

namespace rt = chorus::rt;
using rt::DType;
using rt::ReduceOp;

// The one buffer pool: a buffer comes back when its handle dies and is reused for a request it
// fits at most 4 times over; the oldest go first past the limits; one larger than max_bytes, or
// outliving its pool, is freed.
TEST(BufferPool, ReusesFittingBuffersWithinItsLimits) {
  auto pool = rt::BufferPool::make({.max_buffers = 2, .max_bytes = 1000});
  std::byte* first = nullptr;
  {
    auto b = pool->take(100);
    first = b.get();
  }
  EXPECT_EQ(pool->free_buffers(), 1u);
  EXPECT_EQ(pool->free_bytes(), 100u);
  {
    auto b = pool->take(30);  // 100 <= 4 x 30: the same memory
    EXPECT_EQ(b.get(), first);
    EXPECT_EQ(pool->free_buffers(), 0u);
    auto c = pool->take(20);  // 100 > 4 x 20 (and in use anyway): new memory
    EXPECT_NE(c.get(), first);
  }
  EXPECT_EQ(pool->free_bytes(), 120u);
  {
    auto a = pool->take(400), b = pool->take(500), c = pool->take(600);
  }  // back in the order c, b, a: {100, 20} + 600 drops 100 (3 buffers); + 500 drops 20, then 600
     // (1,100 bytes); + 400 leaves {500, 400}
  EXPECT_EQ(pool->free_buffers(), 2u);
  EXPECT_EQ(pool->free_bytes(), 900u);
  { auto big = pool->take(5000); }
  EXPECT_EQ(pool->free_bytes(), 900u) << "a buffer over max_bytes is not kept";
  auto survivor = pool->take(64);
  pool.reset();  // the buffer outlives its pool: freed by its handle (ASan checks)
  survivor.get()[63] = std::byte{1};
}
