// Steps: every rank bumps its step counter and waits until every other rank has reached it. A
// collective's first step also carries its call signature (RankControl::opened), compared with
// every peer's before any data moves (shm_transport.h, open()).
#include "rt/transport/shm/shm_transport.h"

namespace chorus::rt {

void ShmTransport::step() {
  ++steps_;
  control(rank_)->step.store_and_wake(steps_);
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    SharedCounter& c = control(p)->step;
    wait_until([&] { return static_cast<std::int32_t>(c.value.load(std::memory_order_acquire) - steps_) >= 0; }, c, p);
  }
}

}  // namespace chorus::rt
