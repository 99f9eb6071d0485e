#pragma once
// Which torch.distributed operations of the "chorus" process group travel compressed (MCR-DL's
// compression, rt/compression/compressed.h), and under which error bound:
//
//   CHORUS_COMPRESSION="abs:1e-4"                                  every operation chorus compresses
//   CHORUS_COMPRESSION="all_reduce:abs:1e-4,all_to_all_single:prec:16"
//
// An entry is a bound ("abs:TOL" or "prec:BITS", as rt::compressed::parse_error_bound reads it)
// for every compressible operation, or op:bound for one. The compressible operations are the ones
// chorus has compressed forms of: all_reduce (SUM, AVG), all_gather, all_to_all_single (equal
// splits), send and recv (naming either names both: a compressed send needs a compressed recv).
// Only float32 and float64 tensors (and complex ones, as their float parts) are compressed;
// everything else runs as it would without the setting.
#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "rt/compression/call_compression.h"
#include "rt/compression/zfp_codec.h"
#include "rt/types.h"

namespace chorus::torch_backend {

class CompressionMap {
 public:
  // Throws InputError naming `where` and the bad entry (its position, its text, what is wanted).
  static CompressionMap parse(std::string_view text, const std::string& where);
  // The bound `op` travels under, if it is compressed.
  const std::optional<rt::compressed::ErrorBound>& bound(CollectiveKind op) const {
    return by_op_[static_cast<std::size_t>(op)];
  }
  bool any() const;

 private:
  std::array<std::optional<rt::compressed::ErrorBound>, std::size(kAllCollectiveKinds)> by_op_;
};

}  // namespace chorus::torch_backend
