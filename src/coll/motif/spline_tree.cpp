// Tree splining of an all-reduce: reduce in groups, all-reduce among roots, broadcast back
// (SYNDICATE Appendix A.1; docs/motifs.md).
#include "coll/motif/spline_tree.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace chorus::coll::motif {

Children spline_tree(const Motif& m, int n, bool recursive) {
  if (n < 2) throw InputError("spline", "the tree group size n must be at least 2, got " + std::to_string(n));
  const auto size = m.ranks.size();
  const auto group = static_cast<std::size_t>(n);
  if (m.kind != CollectiveKind::kAllReduce || size <= group) return std::nullopt;

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
    re.kind = CollectiveKind::kReduce;
    re.ranks = g;
    re.root = g.front();
    re.after.clear();
    re.label = "RE" + std::to_string(re.root);
    reduces.push_back(static_cast<int>(out.size()));
    out.push_back(std::move(re));
  }

  // The inner all-reduce, or its own tree. The first inner motif using a root waits for that
  // root's reduce; each broadcast waits for the last inner motif writing its root. Nothing else
  // is ordered, so disjoint subtrees proceed independently (validate.h checks that this is enough).
  std::vector<Motif> middle{inner};
  if (recursive) {
    if (auto sub = spline_tree(inner, n, true)) middle = std::move(*sub);
  }
  const auto uses = [](const Motif& x, int rank) {
    return std::find(x.ranks.begin(), x.ranks.end(), rank) != x.ranks.end();
  };
  const auto writes = [&](const Motif& x, int rank) {
    if (!uses(x, rank)) return false;
    return x.kind == CollectiveKind::kAllReduce || (x.kind == CollectiveKind::kReduce && x.root == rank) ||
           (x.kind == CollectiveKind::kBroadcast && x.root != rank);
  };
  const int base = static_cast<int>(out.size());
  std::vector<bool> used(out.size(), false);  // by reduce index: its root already used inside
  for (auto c : middle) {
    for (int& p : c.after) p += base;
    for (int r : reduces) {
      const auto ru = static_cast<std::size_t>(r);
      if (!used[ru] && uses(c, out[ru].root)) {
        used[ru] = true;
        c.after.push_back(r);
      }
    }
    std::sort(c.after.begin(), c.after.end());
    if (recursive && middle.size() > 1) c.label = "AR/" + c.label;
    out.push_back(std::move(c));
  }
  const auto last_writing = [&](int rank) {
    int last = -1;
    for (std::size_t j = static_cast<std::size_t>(base); j < out.size(); ++j)
      if (writes(out[j], rank)) last = static_cast<int>(j);
    return last;
  };

  for (const auto& g : groups) {
    if (g.size() < 2) continue;
    Motif bc = m;
    bc.kind = CollectiveKind::kBroadcast;
    bc.ranks = g;
    bc.root = g.front();
    bc.after = {last_writing(bc.root)};
    bc.label = "BC" + std::to_string(bc.root);
    out.push_back(std::move(bc));
  }
  return out;
}

}  // namespace chorus::coll::motif
