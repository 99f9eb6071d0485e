// Composition of segmentation and splining over a plan (SYNDICATE Sec. 4.2.1; docs/motifs.md).
#include "coll/motif/compose.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "coll/motif/segment.h"
#include "coll/motif/spline_all_to_all.h"
#include "coll/motif/spline_broadcast.h"
#include "coll/motif/spline_ring.h"
#include "coll/motif/spline_tree.h"
#include "core/error.h"
#include "core/units.h"

namespace chorus::coll::motif {

Transform segmentation(Bytes d) {
  if (d == 0) throw InputError("segment", "the segment size d must be at least 1 byte");
  return {"S(" + std::to_string(d) + ")", [d](const Motif& m) { return segment(m, d); }};
}

Transform splining(int n) {
  if (n < 1) throw InputError("spline", "n must be at least 1, got " + std::to_string(n));
  return {"P(" + std::to_string(n) + ")", [n](const Motif& m) -> Children {
            switch (m.kind) {
              case CollectiveKind::kAllToAll:
                return spline_all_to_all(m, n);
              case CollectiveKind::kBroadcast:
                return spline_broadcast(m, n);
              case CollectiveKind::kAllReduce:
                return n >= 2 ? spline_tree(m, n, true) : std::nullopt;
              default:
                return std::nullopt;
            }
          }};
}

Transform ring_splining() {
  return {"P(ring)", [](const Motif& m) { return spline_ring(m); }};
}

Transform tree_splining(int n, bool recursive) {
  if (n < 2) throw InputError("spline", "the tree group size n must be at least 2, got " + std::to_string(n));
  return {std::string(recursive ? "P(tree:" : "P(tree1:") + std::to_string(n) + ")",
          [n, recursive](const Motif& m) { return spline_tree(m, n, recursive); }};
}

namespace {

int parse_count(std::string_view text, const std::string& field) {
  int v = 0;
  const auto* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || v < 1 || v > 1000000)
    throw InputError(field, "expected a group size n in 1..1000000, got '" + std::string(text) + "'");
  return v;
}

}  // namespace

Transform parse_transform(std::string_view text, const std::string& field) {
  if (text.size() > 2 && (text[0] == 'S' || text[0] == 's') && text[1] == ':') {
    const Bytes d = parse_bytes(text.substr(2), field);
    if (d == 0) throw InputError(field, "the segment size d must be at least 1 byte");
    return segmentation(d);
  }
  if (text.size() > 2 && (text[0] == 'P' || text[0] == 'p') && text[1] == ':') {
    const auto rest = text.substr(2);
    if (rest == "ring") return ring_splining();
    const bool tree = rest.starts_with("tree:"), tree1 = rest.starts_with("tree1:");
    if (tree || tree1) {
      const int n = parse_count(rest.substr(tree ? 5 : 6), field);
      if (n < 2) throw InputError(field, "the tree group size n must be at least 2, got " + std::to_string(n));
      return tree_splining(n, tree);
    }
    return splining(parse_count(rest, field));
  }
  throw InputError(field,
                   "expected S:<bytes>, P:<n>, P:ring, P:tree:<n> or P:tree1:<n>, got '" + std::string(text) + "'");
}

MotifPlan apply(MotifPlan plan, const Transform& t) {
  MotifPlan out{plan.op, {}};
  std::vector<std::vector<int>> last(plan.motifs.size());  // the new indices standing for motif i
  for (std::size_t i = 0; i < plan.motifs.size(); ++i) {
    Motif& m = plan.motifs[i];
    std::vector<int> inherited;
    for (int p : m.after) {
      if (p < 0 || static_cast<std::size_t>(p) >= i)
        throw std::invalid_argument("motif #" + std::to_string(i) + " depends on #" + std::to_string(p) +
                                    ", which is not listed before it");
      const auto& l = last[static_cast<std::size_t>(p)];
      inherited.insert(inherited.end(), l.begin(), l.end());
    }
    std::sort(inherited.begin(), inherited.end());
    inherited.erase(std::unique(inherited.begin(), inherited.end()), inherited.end());

    auto children = t.apply(m);
    const int base = static_cast<int>(out.motifs.size());
    if (!children) {
      m.after = inherited;
      out.motifs.push_back(std::move(m));
      last[i] = {base};
      continue;
    }
    std::vector<bool> has_child(children->size(), false);
    for (const auto& c : *children)
      for (int p : c.after) has_child[static_cast<std::size_t>(p)] = true;
    for (std::size_t j = 0; j < children->size(); ++j) {
      Motif c = std::move((*children)[j]);
      if (c.after.empty()) {
        c.after = inherited;
      } else {
        for (int& p : c.after) p += base;
      }
      c.label = m.label.empty() ? c.label : m.label + "/" + c.label;
      if (!has_child[j]) last[i].push_back(base + static_cast<int>(j));
      out.motifs.push_back(std::move(c));
    }
  }
  return out;
}

MotifPlan compose(const MotifPlan& plan, const std::vector<Transform>& transforms) {
  MotifPlan out = plan;
  for (const auto& t : transforms) out = apply(std::move(out), t);
  return out;
}

}  // namespace chorus::coll::motif
