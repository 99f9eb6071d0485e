#pragma once
// Compressed collectives (MCR-DL Sec. V): blocking all-gather, all-to-all, send / recv and
// all-reduce of f32 / f64 data that travel as zfp blocks (rt/compression/zfp_codec.h) under an
// error bound. Each is the runtime's operation issued with compression as its option
// (call_compression.h): it runs on the backend's lanes, agreed on like any collective, in the
// compressed form of compressed_algorithms.h.
//
//   namespace cz = chorus::rt::compressed;
//   cz::Stats st;
//   cz::all_reduce("gloo", g.data(), g.data(), g.size(), DType::f32, ReduceOp::avg,
//                  {cz::ErrorBound::Kind::kAbsolute, 1e-4}, &st);   // |g - exact avg| <= 1e-4
//
// `backend` is anything the runtime accepts (mpi, gloo, shm, auto, a group name); "auto" is
// resolved once per call, by the operation and its size, so all messages of a call use one
// backend. Ranks call these in the same order with the same count, dtype and bound, as for the
// plain operations: ranks that disagree on the bound (or compress where a peer does not) fail
// together naming it, as for any disagreement. Counts are in elements; in == out is allowed
// where the sizes match, and all_gather's `in` may be this rank's block of `out`. Only f32 and
// f64; any other dtype, a bad bound or (all_reduce) an op other than sum / avg is a
// chorus::InputError, raised before any communication.
//
// Bounds. Absolute (zfp fixed-accuracy; the codec verifies every compression):
//   all_gather, all_to_all_single, send / recv: |out - original| <= bound for every element.
//   all_reduce: |out - exact sum| <= bound for every element, apart from the rounding of the
//     float additions themselves (each partial sum is a dtype value: at most about
//     (p - 1) * eps(dtype) / 2 * sum_r |x_r| more). Each element is compressed p - 1 times in the
//     reduce-scatter ring and once in the all-gather, so every compression gets tolerance
//     bound / p and the errors add up to at most bound. avg divides the sum (error <= bound / p).
// Precision (zfp fixed-precision, bits per value): an error relative to the largest magnitude
//   in each group of 4 values; NO absolute guarantee (all_reduce compounds it over p
//   compressions of partial sums).
//
// Determinism: the same inputs give the same outputs on every run. all_gather and all_reduce
// give bitwise the same result on every rank: every rank, the owner included, uses the decoding
// of the same compressed bytes. In all_to_all_single a rank's block to itself is copied exactly.
// Each operation first exchanges the sizes of the compressed blocks (an all_gather /
// all_to_all_single of 64-bit sizes, or a size message before each payload), then the bytes
// (all_gatherv / all_to_allv / send, recv). all_reduce's ring travels on the channel of the
// backend's own algorithms, apart from the program's point-to-point messages.
// count 0 returns at once (no communication); on a world of one rank everything is a copy.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "rt/compression/call_compression.h"
#include "rt/compression/zfp_codec.h"
#include "rt/types.h"

namespace chorus::rt::compressed {

// in: count elements; out: size()*count elements, block j from rank j.
void all_gather(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
                const ErrorBound& bound, Stats* stats = nullptr);
// in and out: size()*count elements, block j to / from rank j.
void all_to_all_single(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype,
                       const ErrorBound& bound, Stats* stats = nullptr);
// A size message, then the compressed block; recv must name the same count and dtype.
void send(std::string_view backend, const void* buf, std::size_t count, DType dtype, int dst, const ErrorBound& bound,
          Stats* stats = nullptr);
void recv(std::string_view backend, void* buf, std::size_t count, DType dtype, int src, const ErrorBound& bound,
          Stats* stats = nullptr);
// op: sum or avg. Reduce-scatter ring over send / recv of compressed partial sums, then an
// all-gather of the reduced blocks compressed once each (see above).
void all_reduce(std::string_view backend, const void* in, void* out, std::size_t count, DType dtype, ReduceOp op,
                const ErrorBound& bound, Stats* stats = nullptr);

}  // namespace chorus::rt::compressed
