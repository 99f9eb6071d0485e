// Ring splining of an all-reduce: reduce-scatter then all-gather (SYNDICATE Appendix A.1).
#include "coll/motif/spline_ring.h"

namespace chorus::coll::motif {

Children spline_ring(const Motif& m) {
  if (m.kind != CollectiveKind::kAllReduce || m.ranks.size() < 2) return std::nullopt;
  Motif rs = m;
  rs.kind = CollectiveKind::kReduceScatter;
  rs.after.clear();
  rs.label = "RS";
  Motif ag = rs;
  ag.kind = CollectiveKind::kAllGather;
  ag.after = {0};
  ag.label = "AG";
  return std::vector<Motif>{rs, ag};
}

}  // namespace chorus::coll::motif
