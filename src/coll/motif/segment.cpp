// Segmentation S(d) (SYNDICATE Appendix A.1; docs/motifs.md).
#include "coll/motif/segment.h"

#include <string>

#include "core/error.h"

namespace chorus::coll::motif {

Children segment(const Motif& m, Bytes d) {
  if (d == 0) throw InputError("segment", "the segment size d must be at least 1 byte");
  if (m.bytes.size() <= d) return std::nullopt;
  std::vector<Motif> out;
  int s = 0;
  for (Bytes b = m.bytes.begin; b < m.bytes.end; b += d, ++s) {
    Motif c = m;
    c.bytes = {b, b + d < m.bytes.end ? b + d : m.bytes.end};
    c.after.clear();
    c.label = "S" + std::to_string(s);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace chorus::coll::motif
