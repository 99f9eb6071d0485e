#pragma once
// Error-bounded lossy compression of 1-D f32 / f64 arrays with zfp (MCR-DL Sec. V): the codec
// under the compressed collectives of rt/compression/compressed.h.
//
//   ErrorBound b = parse_error_bound("abs:1e-3", "bound");   // or {Kind::kAbsolute, 1e-3}
//   std::vector<std::uint8_t> bytes;
//   compress(x.data(), x.size(), DType::f32, b, bytes);        // appends one block
//   decompress(bytes.data(), bytes.size(), y.data(), y.size(), DType::f32);
//
// Two kinds of bound:
//   absolute   zfp's fixed-accuracy mode with tolerance `value`. The codec GUARANTEES
//              |decompressed - original| <= value for every element: zfp alone does not (its
//              block-floating-point conversion drops small values that share a group of 4
//              with a huge one, and loses bits when the tolerance nears the type's precision
//              at the block's magnitude), so each compression is decompressed and checked, and
//              the elements zfp misses are stored exactly after the stream ("patches"); when
//              that would not be smaller, the whole block is stored uncompressed. Costs one
//              decompression per compression.
//   precision  zfp's fixed-precision mode: `value` bit planes (an integer, 1..32 for f32,
//              1..64 for f64) per block of 4 values, i.e. an error RELATIVE to the largest
//              magnitude in each block; no absolute guarantee.
// Blocks holding NaN or infinity, and blocks that zfp would not make smaller, are stored
// uncompressed (exact). Output is deterministic: the same input gives the same bytes.
//
// Block format (native byte order; every block is a multiple of 8 bytes long, so blocks
// packed back to back stay 8-byte aligned): a 40-byte header (magic, format, dtype, element
// count, zfp mode word, stream bytes, patch count) followed by the payload: the zfp stream
// and the patches (indices, then exact values), or the raw elements; zero-padded.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "rt/types.h"

namespace chorus::rt::compressed {

struct ErrorBound {
  enum class Kind { kAbsolute, kPrecision };
  Kind kind = Kind::kAbsolute;
  double value = 0;
};

// "abs:1e-3" / "absolute:1e-3" (tolerance) or "prec:16" / "precision:16" (bits). Throws
// chorus::InputError naming `field` on bad text or a bad value (see validate_bound; the
// precision is checked against 64 here, against the dtype's bits when used).
ErrorBound parse_error_bound(std::string_view text, const std::string& field);
// The text parse_error_bound reads back: "abs:0.001", "prec:16".
std::string to_string(const ErrorBound& bound);

// Throws chorus::InputError(field, ...) unless dtype is f32 or f64 (the message names the
// dtype) and the bound is usable for it: absolute: finite and > 0; precision: an integer in
// 1..32 (f32) or 1..64 (f64).
void validate_bound(const ErrorBound& bound, DType dtype, const std::string& field);
bool compressible(DType dtype);  // f32 or f64

// Bytes of the block header; an upper bound of a block's size for `count` elements.
inline constexpr std::size_t kBlockHeaderBytes = 40;
std::size_t max_block_bytes(std::size_t count, DType dtype);

// Compresses count elements of `data` and appends the block to `out` (whose size must be a
// multiple of 8); returns the block's size in bytes. Validates as validate_bound (field
// "bound"). count 0 gives a header-only block. If `decoded` is not null it receives the count
// elements decompress() will give for this block, bitwise (the absolute mode's check already
// decodes them, so this saves the sender a decompression); it may overlap `data`.
std::size_t compress(const void* data, std::size_t count, DType dtype, const ErrorBound& bound,
                     std::vector<std::uint8_t>& out, void* decoded = nullptr);

// Decodes one block of `bytes` bytes into `data` (count elements of dtype). Throws
// chorus::rt::CommError if the block is malformed or holds another dtype or count (a peer
// that disagrees about the operation).
// `bound`: the one the block was made with (both sides of an operation give the same); a block
// made with another is refused.
void decompress(const void* bytes, std::size_t size, void* data, std::size_t count, DType dtype,
                const ErrorBound& bound);

}  // namespace chorus::rt::compressed
