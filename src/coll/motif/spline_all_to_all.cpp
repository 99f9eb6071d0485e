// All-to-all splining into groups of n consecutive destinations (SYNDICATE Appendix A.1).
#include "coll/motif/spline_all_to_all.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace chorus::coll::motif {

Children spline_all_to_all(const Motif& m, int n) {
  if (n < 1) throw InputError("spline", "the all-to-all group size n must be at least 1, got " + std::to_string(n));
  if (m.kind != CollectiveKind::kAllToAll) return std::nullopt;
  const auto group = static_cast<std::size_t>(n);
  std::size_t longest = 0;
  for (const auto& d : m.destinations) longest = std::max(longest, d.size());
  const std::size_t count = (longest + group - 1) / group;
  if (count <= 1) return std::nullopt;
  std::vector<Motif> out;
  for (std::size_t c = 0; c < count; ++c) {
    Motif child;  // not a copy of m: its destination lists can be N x N
    child.kind = m.kind;
    child.root = m.root;
    child.bytes = m.bytes;
    child.label = "P" + std::to_string(c);
    for (std::size_t k = 0; k < m.ranks.size(); ++k) {
      const auto& d = m.destinations[k];
      if (c * group >= d.size()) continue;
      child.ranks.push_back(m.ranks[k]);
      child.destinations.emplace_back(d.begin() + static_cast<std::ptrdiff_t>(c * group),
                                      d.begin() + static_cast<std::ptrdiff_t>(std::min(d.size(), (c + 1) * group)));
    }
    out.push_back(std::move(child));
  }
  return out;
}

}  // namespace chorus::coll::motif
