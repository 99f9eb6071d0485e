// The runtime's agreement before every collective (rt/agreement.h) on gloo: its fixed-size
// all-gather as one classic all-reduce of each rank's row among zeros, over the small connections.
#include <cstring>

#include "rt/backends/gloo/gloo_backend.h"

namespace chorus::rt::gloo_backend {

void GlooBackend::agreement_all_gather(const void* mine, void* all, std::size_t bytes) {
  if (!agreement_ || bytes * static_cast<std::size_t>(size_) != agreement_rows_.size())
    return Backend::agreement_all_gather(mine, all, bytes);
  guard("all_reduce", [&] {
    std::memset(agreement_rows_.data(), 0, agreement_rows_.size());
    std::memcpy(agreement_rows_.data() + static_cast<std::size_t>(rank_) * bytes, mine, bytes);
    agreement_->run(agreement_rows_.data(), all);
  });
}

}  // namespace chorus::rt::gloo_backend
