// Broadcast splining into subsets of destinations (SYNDICATE Fig. 9; docs/motifs.md).
#include "coll/motif/spline_broadcast.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace chorus::coll::motif {

Children spline_broadcast(const Motif& m, int n) {
  if (n < 1) throw InputError("spline", "the broadcast group size n must be at least 1, got " + std::to_string(n));
  if (m.kind != CollectiveKind::kBroadcast) return std::nullopt;
  const auto it = std::find(m.ranks.begin(), m.ranks.end(), m.root);
  if (it == m.ranks.end()) return std::nullopt;  // malformed; validate() reports it
  const auto size = m.ranks.size();
  const auto root_pos = static_cast<std::size_t>(it - m.ranks.begin());
  std::vector<int> dsts;
  for (std::size_t k = 1; k < size; ++k) dsts.push_back(m.ranks[(root_pos + k) % size]);
  const auto group = static_cast<std::size_t>(n);
  if (dsts.size() <= group) return std::nullopt;
  std::vector<Motif> out;
  for (std::size_t c = 0; c * group < dsts.size(); ++c) {
    Motif child = m;
    child.ranks = {m.root};
    child.ranks.insert(child.ranks.end(), dsts.begin() + static_cast<std::ptrdiff_t>(c * group),
                       dsts.begin() + static_cast<std::ptrdiff_t>(std::min(dsts.size(), (c + 1) * group)));
    child.after.clear();
    child.label = "P" + std::to_string(c);
    out.push_back(std::move(child));
  }
  return out;
}

}  // namespace chorus::coll::motif
