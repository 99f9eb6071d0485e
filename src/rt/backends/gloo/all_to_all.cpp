// All-to-all on Gloo's new API: all_to_all_single, and all_to_allv through packed buffers when
// a side's blocks are not back to back.
#include <gloo/alltoall.h>
#include <gloo/alltoallv.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "rt/backends/gloo/gloo_backend.h"

namespace chorus::rt::gloo_backend {

void GlooBackend::all_to_all_single(const void* in, void* out, std::size_t count, DType d) {
  const std::size_t bytes = count * dtype_bytes(d) * static_cast<std::size_t>(size_);
  guard("all_to_all_single", [&] {
    gloo::AlltoallOptions opts(context_);
    opts.setInput(const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(in)), bytes);
    opts.setOutput(static_cast<std::uint8_t*>(out), bytes);
    opts.setTag(next_tag());
    opts.setTimeout(timeout_);
    gloo::alltoall(opts);
  });
}

void GlooBackend::all_to_allv(const void* in, const Counts& sc, const Counts& sd, void* out, const Counts& rc,
                              const Counts& rd, DType d) {
  const std::size_t eb = dtype_bytes(d);
  guard("all_to_allv", [&] {
    const bool in_packed = packed(sc, sd), out_packed = packed(rc, rd);
    std::vector<std::int64_t> sbytes(size_), rbytes(size_);
    std::size_t stotal = 0, rtotal = 0;
    for (int j = 0; j < size_; ++j) {
      sbytes[j] = static_cast<std::int64_t>(sc[j] * eb);
      rbytes[j] = static_cast<std::int64_t>(rc[j] * eb);
      stotal += sc[j] * eb;
      rtotal += rc[j] * eb;
    }
    std::vector<std::uint8_t> sbuf(in_packed ? 0 : stotal), rbuf(out_packed ? 0 : rtotal);
    if (!in_packed) {
      std::size_t at = 0;
      for (int j = 0; j < size_; ++j) {
        if (sc[j] > 0) std::memcpy(sbuf.data() + at, static_cast<const char*>(in) + sd[j] * eb, sc[j] * eb);
        at += sc[j] * eb;
      }
    }
    // Gloo rejects null buffers: give it a byte when a side is empty.
    std::uint8_t dummy_in = 0, dummy_out = 0;
    auto* ip = in_packed ? const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(in)) : sbuf.data();
    auto* op = out_packed ? static_cast<std::uint8_t*>(out) : rbuf.data();
    gloo::AlltoallvOptions opts(context_);
    opts.setInput(stotal > 0 ? ip : &dummy_in, sbytes);
    opts.setOutput(rtotal > 0 ? op : &dummy_out, rbytes);
    opts.setTag(next_tag());
    opts.setTimeout(timeout_);
    gloo::alltoallv(opts);
    if (!out_packed) {
      std::size_t at = 0;
      for (int j = 0; j < size_; ++j) {
        if (rc[j] > 0) std::memcpy(static_cast<char*>(out) + rd[j] * eb, rbuf.data() + at, rc[j] * eb);
        at += rc[j] * eb;
      }
    }
  });
}

}  // namespace chorus::rt::gloo_backend
