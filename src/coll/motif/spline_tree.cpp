// Tree splining of an all-reduce: reduce in groups, all-reduce among roots, broadcast back
// (SYNDICATE Appendix A.1; docs/motifs.md).
#include "coll/motif/spline_tree.h"

#include <string>

#include "core/error.h"

namespace chorus::coll::motif {

Children spline_tree(const Motif& m, int n, bool recursive) {
  if (n < 2) throw InputError("spline", "the tree group size n must be at least 2, got " + std::to_string(n));
  const auto size = m.ranks.size();
  const auto group = static_cast<std::size_t>(n);
  if (m.kind != Kind::kAllReduce || size <= group) return std::nullopt;

  std::vector<Motif> out;
  std::vector<std::vector<int>> groups;
  Motif inner = m;
  inner.ranks.clear();
  inner.after.clear();
  inner.label = "AR";
  for (std::size_t c = 0; c * group < size; ++c) {
    std::vector<int> g(m.ranks.begin() + static_cast<std::ptrdiff_t>(c * group),
                       m.ranks.begin() + static_cast<std::ptrdiff_t>(std::min(size, (c + 1) * group)));
    inner.ranks.push_back(g.front());
    groups.push_back(std::move(g));
  }
  std::vector<int> reduces;
  for (const auto& g : groups) {
    if (g.size() < 2) continue;
    Motif re = m;
    re.kind = Kind::kReduce;
    re.ranks = g;
    re.root = g.front();
    re.after.clear();
    re.label = "RE" + std::to_string(re.root);
    reduces.push_back(static_cast<int>(out.size()));
    out.push_back(std::move(re));
  }

  // The inner all-reduce, or its own tree; the broadcasts wait for its last motifs.
  std::vector<Motif> middle{inner};
  if (recursive) {
    if (auto sub = spline_tree(inner, n, true)) middle = std::move(*sub);
  }
  const int base = static_cast<int>(out.size());
  std::vector<bool> has_child(middle.size(), false);
  for (const auto& c : middle)
    for (int p : c.after) has_child[static_cast<std::size_t>(p)] = true;
  std::vector<int> sinks;
  for (std::size_t j = 0; j < middle.size(); ++j) {
    Motif c = middle[j];
    if (c.after.empty()) {
      c.after = reduces;
    } else {
      for (int& p : c.after) p += base;
    }
    if (recursive && middle.size() > 1) c.label = "AR/" + c.label;
    if (!has_child[j]) sinks.push_back(base + static_cast<int>(j));
    out.push_back(std::move(c));
  }

  for (const auto& g : groups) {
    if (g.size() < 2) continue;
    Motif bc = m;
    bc.kind = Kind::kBroadcast;
    bc.ranks = g;
    bc.root = g.front();
    bc.after = sinks;
    bc.label = "BC" + std::to_string(bc.root);
    out.push_back(std::move(bc));
  }
  return out;
}

}  // namespace chorus::coll::motif
