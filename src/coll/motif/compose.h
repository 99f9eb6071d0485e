#pragma once
// Composition of transformation operators (SYNDICATE Sec. 4.2.1 "Composition of Operators"):
// apply a transform to every motif of a plan it applies to, keep the others, and keep the
// order: children whose parent had dependencies inherit them (through the children with no
// dependency of their own), and a motif that depended on a replaced motif now depends on the
// replaced motif's last children (those no other child depends on). S(d) then P(n) is
// compose(plan, {segmentation(d), splining(n)}).
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "coll/motif/transform.h"

namespace chorus::coll::motif {

struct Transform {
  std::string name;  // "S(4096)", "P(2)", "P(ring)", "P(tree1:2)"
  std::function<Children(const Motif&)> apply;
};

Transform segmentation(Bytes d);  // S(d): segment.h, every kind
// P(n) by the motif's kind: all-to-all -> spline_all_to_all(n), broadcast -> spline_broadcast(n),
// all-reduce -> spline_tree(n, recursive) (n >= 2).
Transform splining(int n);
Transform ring_splining();  // P(ring): all-reduce -> RS -> AG
Transform tree_splining(int n, bool recursive);

// Parses "S:<bytes>" (chorus::parse_bytes sizes), "P:<n>", "P:ring", "P:tree:<n>", "P:tree1:<n>"
// (one level). Throws InputError naming `field` on bad text.
Transform parse_transform(std::string_view text, const std::string& field);

// One transform over a plan. Throws std::invalid_argument when a motif depends on a motif that
// is not listed before it.
MotifPlan apply(MotifPlan plan, const Transform& t);
// The transforms in order, each over the whole result of the previous ones.
MotifPlan compose(const MotifPlan& plan, const std::vector<Transform>& transforms);

}  // namespace chorus::coll::motif
