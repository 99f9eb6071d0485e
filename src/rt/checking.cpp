#include "rt/checking.h"

#include <fmt/format.h>

#include <bit>
#include <cstring>

#include "core/error.h"
#include "rt/backends/agreement.h"
#include "rt/compression/call_compression.h"

namespace chorus::rt {

namespace {
constexpr std::size_t kHeader = 10;

std::string describe(const Backend& backend, const std::uint64_t* row) {
  const auto op = static_cast<CollectiveKind>(row[0]);
  std::string s = fmt::format("{}(dtype={}", to_string(op), to_string(static_cast<DType>(row[1])));
  if (traits(op).reduces) s += fmt::format(", op={}", to_string(static_cast<ReduceOp>(row[2])));
  if (row[3] != 0) s += fmt::format(", root={}", static_cast<std::int64_t>(row[3]) - 1);
  if (row[6] == 0) s += fmt::format(", count={}", row[4]);
  if (row[7] != 0)
    s += ", compressed under " +
         compressed::to_string(compressed::ErrorBound{static_cast<compressed::ErrorBound::Kind>(row[7] - 1),
                                                      std::bit_cast<double>(row[8])});
  if (row[9] != 0 && row[9] != kCompressedAlgorithm)
    s += ", " + describe_algorithm(backend, op, static_cast<std::uint16_t>(row[9]));
  return s + fmt::format(") as operation #{}", row[5]);
}
}  // namespace

std::string describe_algorithm(const Backend& backend, CollectiveKind op, std::uint16_t algorithm) {
  if (algorithm == 0) return "the default algorithm";
  if (algorithm == kCompressedAlgorithm) return "its compressed algorithm";
  const std::vector<std::string> names = backend.algorithms(op);
  const std::size_t index = algorithm - 1U;
  return index < names.size() ? fmt::format("algorithm {}:{}", backend.name(), names[index])
                              : fmt::format("algorithm #{} of {}", algorithm, backend.name());
}

std::uint64_t compression_digest(const CallCompression* compression) {
  if (compression == nullptr) return 0;
  const auto& b = compression->bound;
  // The value's bits, rotated by the kind: nonzero for every valid bound (value > 0).
  return std::rotl(std::bit_cast<std::uint64_t>(b.value), 1 + static_cast<int>(b.kind));
}

std::string describe_compression(const CallCompression* compression) {
  return compression == nullptr ? "plain" : "compressed under " + compressed::to_string(compression->bound);
}

void fill_signature(CallSignature& s, const Call& c, int rank, int size, std::size_t algorithm) {
  s.op = c.op;
  s.dtype = c.dtype;
  s.reduce_op = c.reduce_op;
  s.root = c.root;
  s.compression = c.compression.get();
  s.in = c.in;
  s.out = c.out;
  s.may_inline = algorithm == 0;
  s.named_algorithm = algorithm != 0;  // a compressed call's too (CommunicatorState::kCompressed)
  s.algorithm = algorithm == ~std::size_t{0} ? kCompressedAlgorithm : static_cast<std::uint16_t>(algorithm);
  if (traits(c.op).uniform_count) {
    s.count = c.count;
    return;
  }
  // The vector forms: who sends how many elements to whom, compared pairwise (only the root
  // knows a gatherv's counts and a scatterv's).
  s.vector_form = true;
  s.count = c.count;
  s.lists = c.lists.get();
  const auto n = static_cast<std::size_t>(size);
  const bool at_root = rank == c.root;
  switch (c.op) {
    case CollectiveKind::kAllGatherv:
      s.sends.assign(n, c.count);
      s.expects.assign(c.lists->recv_counts.begin(), c.lists->recv_counts.end());
      break;
    case CollectiveKind::kGatherv:
      s.sends.assign(n, 0);
      s.sends[static_cast<std::size_t>(c.root)] = c.count;
      if (at_root)
        s.expects.assign(c.lists->recv_counts.begin(), c.lists->recv_counts.end());
      else
        s.expects.assign(n, 0);
      break;
    case CollectiveKind::kScatterv:
      s.expects.assign(n, 0);
      s.expects[static_cast<std::size_t>(c.root)] = c.count;
      if (at_root)
        s.sends.assign(c.lists->send_counts.begin(), c.lists->send_counts.end());
      else
        s.sends.assign(n, 0);
      break;
    default:  // all_to_all, all_to_allv
      s.sends.assign(c.lists->send_counts.begin(), c.lists->send_counts.end());
      s.expects.assign(c.lists->recv_counts.begin(), c.lists->recv_counts.end());
      break;
  }
}

void check_agreement(Backend& backend, const CallSignature& mine) {
  const int n = backend.size();
  const std::size_t row_len = kHeader + 2 * static_cast<std::size_t>(n);
  std::vector<std::uint64_t> row(row_len, 0), all(row_len * static_cast<std::size_t>(n), 0);
  row[0] = static_cast<std::uint64_t>(mine.op);
  row[1] = static_cast<std::uint64_t>(mine.dtype);
  row[2] = static_cast<std::uint64_t>(mine.reduce_op);
  row[3] = static_cast<std::uint64_t>(mine.root + 1);
  row[4] = mine.vector_form ? 0 : mine.count;
  row[5] = mine.sequence;
  row[6] = mine.vector_form ? 1 : 0;
  row[9] = mine.algorithm;
  if (mine.compression != nullptr) {
    row[7] = 1 + static_cast<std::uint64_t>(mine.compression->bound.kind);
    row[8] = std::bit_cast<std::uint64_t>(mine.compression->bound.value);
  }
  for (int j = 0; j < n && mine.vector_form; ++j) {
    row[kHeader + j] = j < static_cast<int>(mine.sends.size()) ? mine.sends[j] : 0;
    row[kHeader + n + j] = j < static_cast<int>(mine.expects.size()) ? mine.expects[j] : 0;
  }
  backend.run(calls::all_gather(row.data(), all.data(), row_len * sizeof(std::uint64_t), DType::u8), ReduceOp::sum);
  const std::string where = fmt::format("checking mode, backend {}, rank {}", backend.name(), backend.rank());
  const std::uint64_t* first = all.data();
  for (int p = 1; p < n; ++p) {
    const std::uint64_t* other = all.data() + row_len * p;
    for (std::size_t f = 0; f < kHeader; ++f) {
      if (first[f] != other[f])
        throw InputError(where, fmt::format("ranks disagree: rank 0 calls {} but rank {} calls {}",
                                            describe(backend, first), p, describe(backend, other)));
    }
  }
  if (!mine.vector_form) return;
  for (int p = 0; p < n; ++p) {
    for (int q = 0; q < n; ++q) {
      const std::uint64_t sent = all[row_len * p + kHeader + q];
      const std::uint64_t expected = all[row_len * q + kHeader + n + p];
      if (sent != expected)
        throw InputError(where, fmt::format("{}: rank {} sends {} elements to rank {}, but rank {} "
                                            "expects {} from rank {}",
                                            describe(backend, first), p, sent, q, q, expected, p));
    }
  }
}

}  // namespace chorus::rt
