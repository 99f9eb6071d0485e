#include "rt/agreement.h"

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "rt/backends/agreement.h"
#include "rt/dtype.h"
#include "rt/errors.h"

namespace chorus::rt {

namespace {

// Each row opens with the rank's call signature, and for the forms where ranks send different
// amounts to each other a digest of that traffic: the sum over its sends of h(me, j, count)
// minus the sum over its receives of h(j, me, count). Summed over all ranks it is zero when
// every rank expects from each peer what that peer sends it (each pair's two terms cancel), and
// nonzero, but for a 2^-64 chance, when some pair disagrees. The uniform forms have no such
// traffic: their `flow` is the digest of their compression, compared rank by rank.
struct CallDigest {
  OpSignature signature;
  std::uint64_t flow = 0;
};
static_assert(sizeof(CallDigest) == kDigestBytes);

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t pair_term(int src, int dst, std::uint64_t count) {
  return mix(mix((static_cast<std::uint64_t>(src) << 32) | static_cast<std::uint32_t>(dst)) ^ count);
}

CallDigest digest(const CallSignature& call, int me) {
  CallDigest d;
  OpSignature& s = d.signature;
  s.sequence = static_cast<std::uint32_t>(call.sequence);
  s.op = call.op;
  s.dtype = call.dtype;
  s.reduce_op = call.reduce_op;
  s.root = call.root;
  s.vector_form = call.vector_form ? 1 : 0;
  s.algorithm = call.algorithm;
  const std::uint64_t eb = dtype_bytes(call.dtype);
  // all_gatherv: this rank's own block, which each peer compares with its counts; the other
  // vector forms: only the traffic digest.
  if (!call.vector_form)
    s.bytes = call.count * eb;
  else if (call.op == CollectiveKind::kAllGatherv && me < static_cast<int>(call.sends.size()))
    s.bytes = call.sends[me] * eb;
  if (!call.vector_form && call.compression != nullptr) d.flow = compression_digest(call.compression);
  for (std::size_t j = 0; j < call.sends.size(); ++j) d.flow += pair_term(me, static_cast<int>(j), call.sends[j]);
  for (std::size_t j = 0; j < call.expects.size(); ++j) d.flow -= pair_term(static_cast<int>(j), me, call.expects[j]);
  return d;
}

// The rows of a backend without buffers of its own (gloo and mpi beyond 8 ranks), kept per thread:
// this rank's row, every rank's, and where each starts, made again only when the shape changes.
// The row is sent whole: what a call leaves unused is zero, not an earlier call's data.
struct OwnRows {
  std::vector<char> row, all;
  std::vector<const char*> starts;
  std::size_t dirty = 0;  // bytes of `row` the last call wrote

  char* row_for(std::size_t row_bytes, int n, std::size_t used) {
    const auto ranks = static_cast<std::size_t>(n);
    if (row.size() != row_bytes || starts.size() != ranks) {
      row.assign(row_bytes, 0);
      all.resize(row_bytes * ranks);
      starts.resize(ranks);
      for (std::size_t p = 0; p < ranks; ++p) starts[p] = all.data() + p * row_bytes;
      dirty = 0;
    }
    if (dirty > used) std::memset(row.data() + used, 0, dirty - used);
    dirty = used;
    return row.data();
  }
};

[[noreturn, gnu::cold, gnu::noinline]] void throw_compression_disagreement(const Backend& b, const CallSignature& mine,
                                                                           const OpSignature& s, int peer) {
  throw DisagreementError(fmt::format("{} {} on rank {}: ranks disagree: rank {} called {}, {}; rank {} not so ({})",
                                      b.name(), to_string(s.op), b.rank(), b.rank(), describe(s),
                                      describe_compression(mine.compression), peer,
                                      mine.compression == nullptr ? "compressed" : "plain or under another bound"));
}

[[noreturn, gnu::cold, gnu::noinline]] void throw_traffic(const Backend& b, const OpSignature& mine) {
  throw DisagreementError(
      fmt::format("{} {} on rank {}: ranks disagree: in {}, some rank sends a peer a number of elements "
                  "other than the peer expects from it (run with CHORUS_RT_CHECK=1 to name them)",
                  b.name(), to_string(mine.op), b.rank(), describe(mine)));
}

thread_local OwnRows own_rows;

}  // namespace

std::size_t agreement_row_bytes(const Backend& backend) { return kDigestBytes + backend.agreement_inline_bytes(); }

AgreementShape agreement_shape(Backend& backend) {
  return {backend.size(), backend.rank(), agreement_row_bytes(backend), backend.agreement_row()};
}

char* own_agreement_row(const AgreementShape& shape, std::size_t used) {
  return own_rows.row_for(shape.row_bytes, shape.ranks, used);
}

void throw_traffic_disagreement(const Backend& b, const CallSignature& mine) {
  throw_traffic(b, digest(mine, b.rank()).signature);
}

const char* const* agree(Backend& backend, const AgreementShape& shape, const CallSignature& mine, char* row,
                         std::size_t used, bool carries) {
  const int n = shape.ranks, me = shape.rank;
  CallDigest d = digest(mine, me);
  if (row == nullptr) row = agreement_row(shape, used);
  if (carries) d.signature.vector_form |= kRowCarries;
  std::memcpy(row, &d, sizeof d);
  d.signature.vector_form &= static_cast<std::uint8_t>(~kRowCarries);
  // The exchange: on the backend's own buffers (sent in place, only the part in use), else on
  // the rows kept per thread, with every rank's (this runs before every collective).
  const char* const* rows = nullptr;
  if (shape.row == nullptr) {
    backend.agreement_all_gather(row, own_rows.all.data(), shape.row_bytes);
    rows = own_rows.starts.data();
  } else {
    rows = backend.agreement_exchange(used);
  }
  const std::uint64_t eb = dtype_bytes(mine.dtype);
  std::uint64_t flow = 0;
  // Every rank sees every row, so ranks that disagree all throw (the traffic digest is summed
  // over all rows). A rank whose program then ends at once could close its connections under a
  // slower peer still reading the rows, which would report that rank dead rather than the
  // disagreement: one barrier first (its failure ignored), after which every rank has its rows.
  const auto settled = [&backend] {
    try {
      backend.run(calls::barrier(), ReduceOp::sum);
    } catch (...) {  // a peer gone already: this rank has its rows, and says what they show
    }
  };
  for (int p = 0; p < n; ++p) {
    CallDigest theirs;
    std::memcpy(&theirs, rows[p], sizeof theirs);
    if (mine.vector_form) {
      theirs.signature.vector_form &= static_cast<std::uint8_t>(~kRowCarries);
      flow += theirs.flow;
    }
    if (p == me) continue;
    const std::uint64_t expected = mine.op == CollectiveKind::kAllGatherv && p < static_cast<int>(mine.expects.size())
                                       ? mine.expects[p] * eb
                                       : d.signature.bytes;
    // A compressed call against a plain one (or under another bound) first: they also differ in
    // their algorithm, but the bound says more.
    if (!mine.vector_form && theirs.signature.vector_form == 0 && theirs.flow != d.flow) [[unlikely]] {
      settled();
      throw_compression_disagreement(backend, mine, d.signature, p);
    }
    if (!agrees(d.signature, theirs.signature, expected)) [[unlikely]] {
      settled();
      throw_disagreement(backend.name(), to_string(mine.op), me, d.signature, p, theirs.signature,
                         [&backend](CollectiveKind op, std::uint16_t a) { return describe_algorithm(backend, op, a); });
    }
  }
  if (flow != 0) [[unlikely]] {
    settled();
    throw_traffic(backend, d.signature);
  }
  return rows;
}

}  // namespace chorus::rt
