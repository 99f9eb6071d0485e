#pragma once
// Checking mode: before a collective, every rank contributes a signature of its call
// (operation, dtype, reduce op, root, count, and for the vector forms who sends how many
// elements to whom); the signatures are all-gathered on the same backend and compared, and
// any disagreement becomes an InputError naming the ranks and the field, on every rank.
#include <cstdint>
#include <string>
#include <vector>

#include "rt/backend.h"
#include "rt/call.h"

namespace chorus::rt {

struct CallSignature {
  CollectiveKind op = CollectiveKind::kBarrier;
  DType dtype = DType::u8;
  ReduceOp reduce_op = ReduceOp::sum;
  int root = -1;
  std::uint64_t count = 0;     // must agree across ranks unless `vector_form`
  std::uint64_t sequence = 0;  // index of this operation on this backend
  bool vector_form = false;
  // Elements this rank sends to each rank, and expects from each rank (vector forms).
  std::vector<std::uint64_t> sends, expects;
  // The call's buffers (a broadcast's is `out`) and a vector form's lists (the Call's, which
  // outlive the signature), and whether the agreement exchange may carry the call itself when
  // it is small (agreement.h): only with the backend's default algorithm.
  const void* in = nullptr;
  void* out = nullptr;
  const CallLists* lists = nullptr;
  bool may_inline = false;
  bool named_algorithm = false;  // run with a named algorithm (shm then agrees by digest too)
  // Which: OpSignature::algorithm (0 the backend's own choice, 1 + a named one's index, or
  // kCompressedAlgorithm). Ranks must agree on it: it decides which messages the call sends, and
  // whether it rides inside the agreement exchange.
  std::uint16_t algorithm = 0;
  // The bound of a call that travels compressed (the Call's, which outlives the signature); null
  // when it travels plain. Ranks must agree on it: a compressed ring meeting a plain all-reduce
  // would exchange messages of other sizes.
  const CallCompression* compression = nullptr;
};

// A digest of a call's compression (0: none; the bound's kind and value otherwise).
std::uint64_t compression_digest(const CallCompression* compression);
// "plain" or "compressed under abs:0.0001".
std::string describe_compression(const CallCompression* compression);

// The algorithm `algorithm` (OpSignature::algorithm) of `op` on `backend`, for messages: "the
// default algorithm", "algorithm gloo:ring_p2p".
std::string describe_algorithm(const Backend& backend, CollectiveKind op, std::uint16_t algorithm);

// `s` (default-made) becomes the signature of `call` on rank `rank` of `size` ranks; `algorithm`:
// 0 for the backend's own choice (the agreement exchange may then carry a small call itself),
// else a named one. Filled in place: this runs before every collective.
void fill_signature(CallSignature& s, const Call& call, int rank, int size, std::size_t algorithm);

// Runs the agreement check on `backend`; throws InputError on any disagreement.
void check_agreement(Backend& backend, const CallSignature& mine);

}  // namespace chorus::rt
