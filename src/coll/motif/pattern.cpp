// Point-to-point transfers of each motif kind (SYNDICATE Appendix A.1; docs/motifs.md).
#include "coll/motif/pattern.h"

#include <stdexcept>
#include <string>

namespace chorus::coll::motif {

ByteRange ring_piece(ByteRange range, int k, int n) {
  const Bytes len = range.size();
  const auto nn = static_cast<Bytes>(n);
  return {range.begin + len * static_cast<Bytes>(k) / nn, range.begin + len * static_cast<Bytes>(k + 1) / nn};
}

std::vector<Transfer> ring_pattern(const Motif& m, int rounds) {
  if (m.kind != CollectiveKind::kReduceScatter && m.kind != CollectiveKind::kAllGather)
    throw std::invalid_argument("ring_pattern: a " + std::string(to_string(m.kind)) + " motif is not a ring");
  std::vector<Transfer> out;
  const int n = static_cast<int>(m.ranks.size());
  const bool rs = m.kind == CollectiveKind::kReduceScatter;
  for (int r = 0; r < rounds; ++r)
    for (int i = 0; i < n; ++i) {
      const int piece = ((rs ? i - r : i + 1 - r) % n + n) % n;
      const ByteRange b = ring_piece(m.bytes, piece, n);
      if (b.size() == 0) continue;
      out.push_back({r, rs, Address{m.ranks[static_cast<std::size_t>(i)], Buffer::kData, 0},
                     Address{m.ranks[static_cast<std::size_t>((i + 1) % n)], Buffer::kData, 0}, b});
    }
  return out;
}

std::size_t transfer_count(const Motif& m) {
  const std::size_t n = m.ranks.size();
  switch (m.kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
      return n * (n > 0 ? n - 1 : 0);
    case CollectiveKind::kReduce:
    case CollectiveKind::kBroadcast:
      return n > 0 ? n - 1 : 0;
    case CollectiveKind::kAllToAll: {
      std::size_t total = 0;
      for (const auto& d : m.destinations) total += d.size();
      return total;
    }
    default:  // not a motif (kMotifKinds)
      break;
  }
  return 0;
}

std::vector<Transfer> pattern(const Motif& m) {
  std::vector<Transfer> out;
  const int n = static_cast<int>(m.ranks.size());
  auto data = [](int rank) { return Address{rank, Buffer::kData, 0}; };
  switch (m.kind) {
    case CollectiveKind::kAllReduce:
      for (int i : m.ranks)
        for (int j : m.ranks)
          if (i != j) out.push_back({0, true, data(i), data(j), m.bytes});
      break;
    case CollectiveKind::kReduce:
      for (int i : m.ranks)
        if (i != m.root) out.push_back({0, true, data(i), data(m.root), m.bytes});
      break;
    case CollectiveKind::kBroadcast:
      for (int j : m.ranks)
        if (j != m.root) out.push_back({0, false, data(m.root), data(j), m.bytes});
      break;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather:
      return ring_pattern(m, n - 1);
    case CollectiveKind::kAllToAll:
      if (m.destinations.size() != m.ranks.size())
        throw std::invalid_argument("all_to_all motif: " + std::to_string(m.destinations.size()) +
                                    " destination lists for " + std::to_string(m.ranks.size()) + " sources");
      for (std::size_t k = 0; k < m.ranks.size(); ++k)
        for (int dst : m.destinations[k])
          out.push_back(
              {0, false, Address{m.ranks[k], Buffer::kSend, dst}, Address{dst, Buffer::kRecv, m.ranks[k]}, m.bytes});
      break;
    default:
      throw std::invalid_argument("pattern: " + std::string(to_string(m.kind)) + " is not a motif");
  }
  return out;
}

}  // namespace chorus::coll::motif
