// Plan options of a comm-op and their motifs (SYNDICATE Sec. 4.2-4.3, docs/syndicate.md).
#include "syndicate/plan_option.h"

#include <fmt/format.h>

#include <cmath>

#include "coll/motif/compose.h"
#include "core/error.h"

namespace chorus::syndicate {

int CommOp::ranks() const {
  int n = 1;
  for (int s : sizes) n *= s;
  return n;
}

CommOp make_comm_op(const workload::Dag& dag, int node, const Topology& topo) {
  const auto& n = dag.nodes.at(static_cast<std::size_t>(node));
  const auto where = fmt::format("workload node {} ('{}')", node, n.name);
  if (n.kind != workload::NodeKind::kComm) throw InputError(where, "not a communication node");
  if (n.comm != workload::CommKind::kCollective)
    throw InputError(where, "point-to-point transfers are not SYNDICATE comm-ops (collectives only)");
  CommOp op;
  op.node = node;
  op.name = n.name;
  op.kind = n.op;
  op.bytes = n.bytes;
  op.dims = n.dims;
  for (int d : op.dims) {
    if (d < 0 || d >= static_cast<int>(topo.dims.size()))
      throw InputError(
          where, fmt::format("dimension {} is not one of topology '{}' ({} dims)", d, topo.name, topo.dims.size()));
    op.sizes.push_back(topo.dims[static_cast<std::size_t>(d)]);
  }
  return op;
}

std::string describe(const PlanOption& o, const Topology& topo) {
  std::string s = o.algorithm;
  if (o.segments > 1) s += fmt::format(" S{}", o.segments);
  if (o.spline > 1) s += fmt::format(" P{}", o.spline);
  s += " @" + topo.paths.at(static_cast<std::size_t>(o.path)).name;
  if (o.alt_path >= 0)
    s += fmt::format(" {}@{}", o.alt_segments, topo.paths.at(static_cast<std::size_t>(o.alt_path)).name);
  return s;
}

namespace {

std::vector<std::string> algorithms(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return {"ring", "tree"};
    case CollectiveKind::kAllToAll:
      return {"pairwise"};
    default:
      return {"ring"};
  }
}

// Segment counts that keep a segment at least min_segment_bytes long (always 1).
std::vector<int> segment_counts(double bytes, const OptionSpace& space) {
  std::vector<int> out;
  for (int s : space.segments)
    if (s == 1 || bytes / s >= space.min_segment_bytes) out.push_back(s);
  if (out.empty() || out.front() != 1) out.insert(out.begin(), 1);
  return out;
}

}  // namespace

std::vector<PlanOption> enumerate_options(const CommOp& op, const Topology& topo, const OptionSpace& space) {
  std::vector<PlanOption> out;
  const double per_destination = op.kind == CollectiveKind::kAllToAll ? op.bytes / op.ranks() : op.bytes;
  if (!topo.costs.empty()) {
    for (const auto& row : topo.costs) {
      if (row.kind != op.kind) continue;
      const int path = topo.path_index(row.path);
      const std::vector<int> segs =
          row.bandwidth_gbps > 0 ? segment_counts(per_destination, space) : std::vector<int>{1};
      for (int s : segs) out.push_back({row.algorithm, s, 1, path});
    }
    if (out.empty())
      throw InputError(fmt::format("topology '{}' costs", topo.name),
                       fmt::format("no row for {} (comm-op '{}')", to_string(op.kind), op.name));
    return out;
  }
  std::vector<PlanOption> multipath;  // listed after every single-path option
  for (std::size_t p = 0; p < topo.paths.size(); ++p)
    for (const auto& a : algorithms(op.kind)) {
      if (a == "tree" && op.ranks() <= 2) continue;  // a tree of two ranks is the ring
      for (int s : segment_counts(per_destination, space)) {
        std::vector<int> splines{1};
        if (op.kind == CollectiveKind::kAllToAll) {
          splines.clear();
          for (int k : space.splines)
            if (k <= op.ranks()) splines.push_back(k);
        }
        for (int k : splines) {
          out.push_back({a, s, k, static_cast<int>(p)});
          // Multipath: the last m of the s segments on a later path (each split listed once).
          if (space.multipath)
            for (std::size_t q = p + 1; q < topo.paths.size(); ++q)
              for (int m = 1; m < s; ++m) multipath.push_back({a, s, k, static_cast<int>(p), static_cast<int>(q), m});
        }
      }
    }
  out.insert(out.end(), multipath.begin(), multipath.end());
  return out;
}

namespace {

// The bytes a motif plan of `op` covers: per destination for an all-to-all (D).
coll::motif::Bytes motif_bytes(const CommOp& op) {
  const double per_destination = op.kind == CollectiveKind::kAllToAll ? op.bytes / op.ranks() : op.bytes;
  return static_cast<coll::motif::Bytes>(std::max(1.0, std::round(per_destination)));
}

}  // namespace

coll::motif::Bytes segment_size(const CommOp& op, const PlanOption& o) {
  const auto bytes = motif_bytes(op);
  return (bytes + o.segments - 1) / o.segments;
}

coll::motif::MotifPlan expand(const CommOp& op, const PlanOption& o) {
  const int n = op.ranks();
  const auto bytes = motif_bytes(op);
  coll::motif::MotifPlan plan;
  if (op.kind == CollectiveKind::kAllReduce || op.kind == CollectiveKind::kAllToAll ||
      op.kind == CollectiveKind::kBroadcast) {
    plan = coll::motif::single_motif_plan(coll::motif::make_comm_op(op.kind, n, bytes, 0));
  } else {
    // Reduce-scatter and all-gather comm-ops (ZeRO, FSDP): one motif, which segmentation slices.
    plan.op.kind = op.kind;
    for (int r = 0; r < n; ++r) plan.op.ranks.push_back(r);
    plan.op.bytes = bytes;
    coll::motif::Motif m;
    m.kind = op.kind;
    m.ranks = plan.op.ranks;
    m.bytes = {0, bytes};
    plan.motifs.push_back(m);
  }
  std::vector<coll::motif::Transform> transforms;
  if (o.segments > 1) transforms.push_back(coll::motif::segmentation(segment_size(op, o)));
  if (op.kind == CollectiveKind::kAllToAll && o.spline > 1)
    transforms.push_back(coll::motif::splining((n + o.spline - 1) / o.spline));
  if (op.kind == CollectiveKind::kAllReduce && o.algorithm == "tree" && n > 2) {
    // Hierarchical: reduce within the groups of the first dimension, all-reduce among their
    // roots, broadcast back (one level, P(tree1:n0)); on one dimension a binary tree (P(tree:2)).
    const bool hierarchical = op.sizes.size() >= 2 && op.sizes[0] >= 2;
    transforms.push_back(hierarchical ? coll::motif::tree_splining(op.sizes[0], false)
                                      : coll::motif::tree_splining(2, true));
  }
  return coll::motif::compose(plan, transforms);
}

}  // namespace chorus::syndicate
