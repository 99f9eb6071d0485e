#pragma once
// The compressed forms of the operations (call_compression.h): what the runtime runs, on a
// communicator's lane, for a Call whose `compression` is set. Built on the backend's own
// operations and point-to-point messages, like the generic algorithms of rt/algorithms/.
//
//   all_gather         each rank compresses its block once; the block sizes are all-gathered,
//                      then the blocks (all_gatherv); every rank, the owner too, uses the decoding
//                      of the same bytes, so the result is bitwise equal everywhere.
//   all_to_all_single  the blocks for the other ranks compressed, their sizes exchanged, then the
//                      blocks (all_to_allv); a rank's block to itself is copied exactly.
//   send / recv        a size message, then the block, on the application's channel.
//   all_reduce         a reduce-scatter ring of compressed partial sums (p - 1 hops, each a
//                      size message and a block to the right), then the all-gather above of the
//                      reduced blocks. Each element is compressed p times, so each compression
//                      gets bound / p of an absolute bound; avg divides the sum.
// The guarantees are compressed.h's.
#include "rt/backend.h"
#include "rt/call.h"

namespace chorus::rt::compressed {

// Throws InputError naming "compressed::<op>" unless `call` (compression set) has a compressed
// form: its kind (kCompressible), f32 or f64, sum or avg for all_reduce, a valid bound.
void check(const Call& call);

// Runs `call` (checked, compression set) on `backend`, and adds what it sent to the call's
// Stats and StatsTotals. A world of one copies; count 0 does nothing.
void run(Backend& backend, const Call& call);

}  // namespace chorus::rt::compressed
