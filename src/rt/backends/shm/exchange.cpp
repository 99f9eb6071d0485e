// Backend "shm" (shm_backend.h): the exchange engine. The all-gathers copy every peer's block
// out of its slot, round by round; gather, scatter, their v-forms and the all-to-alls run on one
// generic exchange whose opening step shares every rank's byte counts; the runtime's digest
// exchange opens as the call it carries.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "rt/backends/shm/shm_backend.h"
#include "rt/dtype.h"

namespace chorus::rt::shm_backend {

using namespace shm;

void ShmBackend::all_gather(const void* in, void* out, std::size_t count, DType dtype) {
  t_.begin("all_gather");
  const std::size_t n = static_cast<std::size_t>(size_);
  Counts counts(n, count), displs(n);
  for (std::size_t j = 0; j < n; ++j) displs[j] = j * count;
  gather_all(in, count, out, counts, displs, dtype,
             {.op = CollectiveKind::kAllGather, .dtype = dtype, .bytes = count * dtype_bytes(dtype)});
}

// The runtime's digest exchange (rt/agreement.h), which calls with a named algorithm and
// compressed calls take here, opens as the call whose digest it carries (`mine` opens with its
// OpSignature, algorithm included), not as an all-gather of bytes: a peer that makes the same
// call with shm's own algorithm, on the data path, then fails naming that call and both
// algorithms, and a peer's lines never pass for its own.
void ShmBackend::agreement_all_gather(const void* mine, void* all, std::size_t bytes) {
  OpSignature call;
  std::memcpy(&call, mine, sizeof call);
  if (call.vector_form != 0) return all_gather(mine, all, bytes, DType::u8);
  t_.begin(to_string(call.op).data());
  const std::size_t n = static_cast<std::size_t>(size_);
  Counts counts(n, bytes), displs(n);
  for (std::size_t j = 0; j < n; ++j) displs[j] = j * bytes;
  gather_all(mine, bytes, all, counts, displs, DType::u8, call, call.bytes);
}

void ShmBackend::all_gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                             DType dtype) {
  t_.begin("all_gatherv");
  gather_all(
      in, count, out, counts, displs, dtype,
      {.op = CollectiveKind::kAllGatherv, .dtype = dtype, .vector_form = 1, .bytes = count * dtype_bytes(dtype)});
}

// all_gather(v): every peer must declare the block this rank expects from it (or `declared`,
// when the signature is another call's: agreement_all_gather).
void ShmBackend::gather_all(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                            DType dtype, const OpSignature& sig, std::optional<std::uint64_t> declared) {
  const std::size_t eb = dtype_bytes(dtype);
  const std::size_t cap = t_.slot_bytes() / eb;
  std::size_t max_count = 0;
  for (std::size_t c : counts) max_count = std::max(max_count, c);
  const std::size_t rounds = (max_count + cap - 1) / cap;
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(out);
  auto piece = [&](std::size_t total, std::size_t k) {
    return total > k * cap ? std::min(cap, total - k * cap) : std::size_t{0};
  };
  char* own = dst + displs[rank_] * eb;
  if (count > 0 && own != src) std::memmove(own, src, count * eb);
  auto write = [&](std::size_t k) {
    if (const std::size_t n = piece(count, k)) std::memcpy(t_.slot(rank_, t_.side(k)), src + k * cap * eb, n * eb);
  };
  write(0);
  t_.open(sig, [&](int p) { return declared ? *declared : counts[p] * eb; });
  for (std::size_t k = 0; k < rounds; ++k) {
    for (int j = 0; j < size_; ++j) {
      if (j == rank_) continue;
      if (const std::size_t n = piece(counts[j], k))
        std::memcpy(dst + (displs[j] + k * cap) * eb, t_.slot(j, t_.side(k)), n * eb);
    }
    if (k + 1 < rounds) {
      write(k + 1);
      t_.step();
    }
  }
  t_.advance(rounds);
}

void ShmBackend::all_to_allv(const void* in, const Counts& sc, const Counts& sd, void* out, const Counts& rc,
                             const Counts& rd, DType dtype) {
  t_.begin("all_to_allv");
  const std::size_t eb = dtype_bytes(dtype);
  std::vector<const char*> sp(size_);
  std::vector<char*> dp(size_);
  std::vector<std::size_t> sb(size_), db(size_);
  for (int j = 0; j < size_; ++j) {
    sp[j] = static_cast<const char*>(in) + sd[j] * eb;
    dp[j] = static_cast<char*>(out) + rd[j] * eb;
    sb[j] = sc[j] * eb;
    db[j] = rc[j] * eb;
  }
  exchange(sp, sb, dp, db, {.op = CollectiveKind::kAllToAllv, .dtype = dtype, .vector_form = 1});
}

void ShmBackend::all_to_all(const std::vector<const void*>& ins, const Counts& in_counts,
                            const std::vector<void*>& outs, const Counts& out_counts, DType dtype) {
  t_.begin("all_to_all");
  const std::size_t eb = dtype_bytes(dtype);
  std::vector<const char*> sp(size_);
  std::vector<char*> dp(size_);
  std::vector<std::size_t> sb(size_), db(size_);
  for (int j = 0; j < size_; ++j) {
    sp[j] = static_cast<const char*>(ins[j]);
    dp[j] = static_cast<char*>(outs[j]);
    sb[j] = in_counts[j] * eb;
    db[j] = out_counts[j] * eb;
  }
  exchange(sp, sb, dp, db, {.op = CollectiveKind::kAllToAll, .dtype = dtype, .vector_form = 1});
}

void ShmBackend::gatherv(const void* in, std::size_t count, void* out, const Counts& counts, const Counts& displs,
                         DType dtype, int root) {
  t_.begin("gatherv");
  const std::size_t eb = dtype_bytes(dtype);
  std::vector<const char*> sp(size_, nullptr);
  std::vector<char*> dp(size_, nullptr);
  std::vector<std::size_t> sb(size_, 0), db(size_, 0);
  sp[root] = static_cast<const char*>(in);
  sb[root] = count * eb;
  if (rank_ == root)
    for (int j = 0; j < size_; ++j) {
      dp[j] = static_cast<char*>(out) + displs[j] * eb;
      db[j] = counts[j] * eb;
    }
  exchange(sp, sb, dp, db, {.op = CollectiveKind::kGatherv, .dtype = dtype, .vector_form = 1, .root = root});
}

void ShmBackend::scatterv(const void* in, const Counts& counts, const Counts& displs, void* out, std::size_t count,
                          DType dtype, int root) {
  t_.begin("scatterv");
  const std::size_t eb = dtype_bytes(dtype);
  std::vector<const char*> sp(size_, nullptr);
  std::vector<char*> dp(size_, nullptr);
  std::vector<std::size_t> sb(size_, 0), db(size_, 0);
  dp[root] = static_cast<char*>(out);
  db[root] = count * eb;
  if (rank_ == root)
    for (int j = 0; j < size_; ++j) {
      sp[j] = static_cast<const char*>(in) + displs[j] * eb;
      sb[j] = counts[j] * eb;
    }
  exchange(sp, sb, dp, db, {.op = CollectiveKind::kScatterv, .dtype = dtype, .vector_form = 1, .root = root});
}

// gather, scatter and all_to_all_single: their v-forms with every count alike.
void ShmBackend::gather(const void* in, void* out, std::size_t count, DType dtype, int root) {
  const UniformCounts u(size_, count);
  gatherv(in, count, out, u.counts, u.displs, dtype, root);
}

void ShmBackend::scatter(const void* in, void* out, std::size_t count, DType dtype, int root) {
  const UniformCounts u(size_, count);
  scatterv(in, u.counts, u.displs, out, count, dtype, root);
}

void ShmBackend::all_to_all_single(const void* in, void* out, std::size_t count, DType dtype) {
  const UniformCounts u(size_, count);
  all_to_allv(in, u.counts, u.displs, out, u.counts, u.displs, dtype);
}

// Generic exchange: sp[j]/sb[j] is what this rank sends to j, dp[p]/db[p] where what comes
// from p goes. A header step (the collective's opening) shares every rank's byte counts, which
// are checked for agreement pair by pair (the signature leaves them out) and give the number
// of rounds.
void ShmBackend::exchange(const std::vector<const char*>& sp, const std::vector<std::size_t>& sb,
                          const std::vector<char*>& dp, const std::vector<std::size_t>& db, const OpSignature& sig) {
  const std::size_t n = static_cast<std::size_t>(size_);
  const std::size_t parity = t_.next_exchange_parity();
  std::uint64_t* mine = t_.header(rank_, parity);
  for (std::size_t j = 0; j < n; ++j) {
    mine[j] = sb[j];
    mine[n + j] = db[j];
  }
  t_.open(sig);
  const std::size_t region = t_.slot_bytes() / n / kLine * kLine;
  std::size_t rounds = 0;
  for (int p = 0; p < size_; ++p) {
    const std::uint64_t* row = t_.header(p, parity);
    for (int q = 0; q < size_; ++q) {
      const std::uint64_t sent = row[q];
      const std::uint64_t expected = t_.header(q, parity)[n + static_cast<std::size_t>(p)];
      if (sent != expected)
        throw InputError(fmt::format("{} on shm, rank {}", t_.op(), rank_),
                         fmt::format("rank {} sends {} bytes to rank {}, but rank {} expects {} "
                                     "bytes from rank {}",
                                     p, sent, q, q, expected, p));
      if (p != q) rounds = std::max<std::size_t>(rounds, (sent + region - 1) / region);
    }
  }
  if (sb[rank_] > 0 && dp[rank_] != sp[rank_]) std::memmove(dp[rank_], sp[rank_], sb[rank_]);
  auto piece = [&](std::size_t total, std::size_t k) {
    return total > k * region ? std::min(region, total - k * region) : std::size_t{0};
  };
  auto write = [&](std::size_t k) {
    for (int j = 0; j < size_; ++j)
      if (j != rank_)
        if (const std::size_t m = piece(sb[j], k))
          std::memcpy(t_.slot(rank_, t_.side(k)) + static_cast<std::size_t>(j) * region, sp[j] + k * region, m);
  };
  if (rounds == 0) return;
  write(0);
  t_.step();
  for (std::size_t k = 0; k < rounds; ++k) {
    for (int p = 0; p < size_; ++p)
      if (p != rank_)
        if (const std::size_t m = piece(db[p], k))
          std::memcpy(dp[p] + k * region, t_.slot(p, t_.side(k)) + static_cast<std::size_t>(rank_) * region, m);
    if (k + 1 < rounds) {
      write(k + 1);
      t_.step();
    }
  }
  t_.advance(rounds);
}

}  // namespace chorus::rt::shm_backend
