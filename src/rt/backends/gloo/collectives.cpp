// The collectives that move data without reducing it (and barrier), on Gloo's new API: barrier,
// broadcast, all_gather, all_gatherv (through a packed buffer when the blocks are not back to
// back), gather, scatter.
#include <gloo/allgather.h>
#include <gloo/allgatherv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/scatter.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "rt/backends/gloo/gloo_backend.h"

namespace chorus::rt::gloo_backend {

bool packed(const Counts& counts, const Counts& displs) {
  std::size_t at = 0;
  for (std::size_t j = 0; j < counts.size(); ++j) {
    if (displs[j] != at) return false;
    at += counts[j];
  }
  return true;
}

void GlooBackend::barrier() {
  guard("barrier", [&] {
    gloo::BarrierOptions opts(context_);
    opts.setTag(next_tag());
    opts.setTimeout(timeout_);
    gloo::barrier(opts);
  });
}

void GlooBackend::broadcast(void* buf, std::size_t count, DType d, int root) {
  guard("broadcast", [&] {
    gloo::BroadcastOptions opts(context_);
    opts.setOutput(static_cast<std::uint8_t*>(buf), count * dtype_bytes(d));
    opts.setRoot(root);
    opts.setTag(next_tag());
    opts.setTimeout(timeout_);
    gloo::broadcast(opts);
  });
}

void GlooBackend::all_gather(const void* in, void* out, std::size_t count, DType d) {
  const std::size_t bytes = count * dtype_bytes(d);
  guard("all_gather", [&] {
    gloo::AllgatherOptions opts(context_);
    auto* o = static_cast<std::uint8_t*>(out);
    if (in != o + static_cast<std::size_t>(rank_) * bytes)
      opts.setInput(const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(in)), bytes);
    opts.setOutput(o, bytes * static_cast<std::size_t>(size_));
    opts.setTag(next_tag());
    opts.setTimeout(timeout_);
    gloo::allgather(opts);
  });
}

void GlooBackend::all_gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                              DType d) {
  const std::size_t eb = dtype_bytes(d);
  guard("all_gatherv", [&] {
    std::vector<std::size_t> bytes(size_);
    std::size_t total = 0;
    for (int j = 0; j < size_; ++j) total += bytes[j] = counts[j] * eb;
    const bool direct = packed(counts, displs);
    std::vector<std::uint8_t> tmp(direct ? 0 : total);
    auto* o = direct ? static_cast<std::uint8_t*>(out) : tmp.data();
    std::vector<std::uint8_t> in_copy(static_cast<const std::uint8_t*>(in),
                                      static_cast<const std::uint8_t*>(in) + count * eb);
    gloo::AllgathervOptions opts(context_);
    opts.setInput(in_copy.data(), count * eb);
    opts.setOutput(o, bytes);
    opts.setTag(next_tag());
    opts.setTimeout(timeout_);
    gloo::allgatherv(opts);
    if (!direct) {
      std::size_t at = 0;
      for (int j = 0; j < size_; ++j) {
        if (bytes[j] > 0) std::memcpy(static_cast<char*>(out) + displs[j] * eb, tmp.data() + at, bytes[j]);
        at += bytes[j];
      }
    }
  });
}

void GlooBackend::gather(const void* in, void* out, std::size_t count, DType d, int root) {
  const std::size_t bytes = count * dtype_bytes(d);
  guard("gather", [&] {
    gloo::GatherOptions opts(context_);
    opts.setInput(const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(in)), bytes);
    if (rank_ == root) opts.setOutput(static_cast<std::uint8_t*>(out), bytes * static_cast<std::size_t>(size_));
    opts.setRoot(root);
    opts.setTag(next_tag());
    opts.setTimeout(timeout_);
    gloo::gather(opts);
  });
}

void GlooBackend::scatter(const void* in, void* out, std::size_t count, DType d, int root) {
  const std::size_t bytes = count * dtype_bytes(d);
  guard("scatter", [&] {
    gloo::ScatterOptions opts(context_);
    std::vector<std::uint8_t*> ptrs;
    if (rank_ == root) {
      for (int j = 0; j < size_; ++j)
        ptrs.push_back(const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(in)) +
                       static_cast<std::size_t>(j) * bytes);
      opts.setInputs(ptrs, bytes);
    }
    opts.setOutput(static_cast<std::uint8_t*>(out), bytes);
    opts.setRoot(root);
    opts.setTag(next_tag());
    opts.setTimeout(timeout_);
    gloo::scatter(opts);
  });
}

}  // namespace chorus::rt::gloo_backend
