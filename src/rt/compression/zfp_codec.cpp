// zfp codec of the compressed collectives; see zfp_codec.h for the guarantees and the block format.
#include "rt/compression/zfp_codec.h"

#include <zfp.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.h"
#include "rt/errors.h"

namespace chorus::rt::compressed {
namespace {

constexpr std::uint32_t kMagic = 0x315a4643;  // "CFZ1" in little-endian bytes

enum class Format : std::uint8_t { kEmpty = 0, kZfp = 1, kRaw = 2 };

struct Header {
  std::uint32_t magic;
  std::uint8_t format;
  std::uint8_t dtype;
  std::uint16_t reserved;
  std::uint64_t count;
  std::uint64_t mode;          // format zfp: zfp_stream_mode() of the encoder, else 0
  std::uint64_t stream_bytes;  // format zfp: bytes of the zfp stream (a multiple of 8)
  std::uint64_t patches;       // format zfp: elements stored exactly after the stream
};
static_assert(sizeof(Header) == kBlockHeaderBytes);

struct StreamCloser {
  void operator()(zfp_stream* s) const { zfp_stream_close(s); }
};
struct FieldFreer {
  void operator()(zfp_field* f) const { zfp_field_free(f); }
};
struct BitstreamCloser {
  void operator()(bitstream* b) const { stream_close(b); }
};
using StreamPtr = std::unique_ptr<zfp_stream, StreamCloser>;
using FieldPtr = std::unique_ptr<zfp_field, FieldFreer>;
using BitstreamPtr = std::unique_ptr<bitstream, BitstreamCloser>;

constexpr std::size_t round8(std::size_t n) { return (n + 7) / 8 * 8; }

zfp_type zfp_type_of(DType dtype) { return dtype == DType::f32 ? zfp_type_float : zfp_type_double; }

unsigned type_bits(DType dtype) { return static_cast<unsigned>(dtype_bytes(dtype) * 8); }

// Checks the value of a bound; max_bits caps a precision.
void check_value(const ErrorBound& bound, unsigned max_bits, const std::string& field) {
  if (bound.kind == ErrorBound::Kind::kAbsolute) {
    if (!std::isfinite(bound.value) || bound.value <= 0)
      throw InputError(field, fmt::format("absolute error bound must be a finite number > 0, got {}", bound.value));
    return;
  }
  if (!std::isfinite(bound.value) || bound.value != std::floor(bound.value) || bound.value < 1 ||
      bound.value > static_cast<double>(max_bits))
    throw InputError(field,
                     fmt::format("precision must be a whole number of bits in 1..{}, got {}", max_bits, bound.value));
}

StreamPtr open_stream() {
  StreamPtr zs(zfp_stream_open(nullptr));
  if (!zs) throw std::bad_alloc();
  return zs;
}

FieldPtr field_1d(const void* data, DType dtype, std::size_t count) {
  // zfp's field takes a non-const pointer; the encoder only reads it.
  FieldPtr f(zfp_field_1d(const_cast<void*>(data), zfp_type_of(dtype), count));
  if (!f) throw std::bad_alloc();
  return f;
}

void write_header(std::vector<std::uint8_t>& out, std::size_t at, Format format, DType dtype, std::size_t count,
                  std::uint64_t mode = 0, std::uint64_t stream_bytes = 0, std::uint64_t patches = 0) {
  const Header h{kMagic,
                 static_cast<std::uint8_t>(format),
                 static_cast<std::uint8_t>(dtype),
                 0,
                 static_cast<std::uint64_t>(count),
                 mode,
                 stream_bytes,
                 patches};
  std::memcpy(out.data() + at, &h, sizeof h);
}

std::size_t append_raw(const void* data, std::size_t count, DType dtype, std::vector<std::uint8_t>& out,
                       std::size_t base) {
  const std::size_t bytes = count * dtype_bytes(dtype);
  out.resize(base + kBlockHeaderBytes + round8(bytes));  // zero padding
  write_header(out, base, count == 0 ? Format::kEmpty : Format::kRaw, dtype, count);
  if (bytes > 0) std::memcpy(out.data() + base + kBlockHeaderBytes, data, bytes);
  return out.size() - base;
}

template <typename T>
bool all_finite(const void* data, std::size_t count) {
  const T* x = static_cast<const T*>(data);
  for (std::size_t i = 0; i < count; ++i)
    if (!std::isfinite(x[i])) return false;
  return true;
}

// Indices where the decoded value misses the original by more than `tolerance`; stops once it
// holds more than `limit` (the caller then stores the block raw).
template <typename T>
std::vector<std::uint64_t> misses(const void* original, const void* decoded, std::size_t count, double tolerance,
                                  std::size_t limit) {
  const T* a = static_cast<const T*>(original);
  const T* b = static_cast<const T*>(decoded);
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < count && out.size() <= limit; ++i)
    if (!(std::fabs(static_cast<double>(b[i]) - static_cast<double>(a[i])) <= tolerance)) out.push_back(i);
  return out;
}

// Appends the patch list (indices, then the exact values) to a zfp block at out[base...].
void append_patches(const void* data, DType dtype, const std::vector<std::uint64_t>& where,
                    std::vector<std::uint8_t>& out, std::size_t base) {
  const std::size_t esz = dtype_bytes(dtype);
  const std::size_t at = out.size();
  out.resize(at + round8(where.size() * (sizeof(std::uint64_t) + esz)));
  std::memcpy(out.data() + at, where.data(), where.size() * sizeof(std::uint64_t));
  std::uint8_t* values = out.data() + at + where.size() * sizeof(std::uint64_t);
  for (std::size_t k = 0; k < where.size(); ++k)
    std::memcpy(values + k * esz, static_cast<const std::uint8_t*>(data) + where[k] * esz, esz);
  Header h;
  std::memcpy(&h, out.data() + base, sizeof h);
  h.patches = where.size();
  std::memcpy(out.data() + base, &h, sizeof h);
}

// Encodes with zfp at `bound` (tolerance or bits) into out[base...] (header + stream); returns
// the block's size, or 0 when zfp fails.
std::size_t encode(const void* data, std::size_t count, DType dtype, ErrorBound::Kind kind, double value,
                   std::vector<std::uint8_t>& out, std::size_t base) {
  const FieldPtr field = field_1d(data, dtype, count);
  const StreamPtr zs = open_stream();
  if (kind == ErrorBound::Kind::kAbsolute)
    zfp_stream_set_accuracy(zs.get(), value);
  else
    zfp_stream_set_precision(zs.get(), static_cast<unsigned>(value));
  const std::size_t capacity = round8(zfp_stream_maximum_size(zs.get(), field.get()));
  out.resize(base + kBlockHeaderBytes + capacity);
  // out.data() comes from operator new (16-byte aligned) and base is a multiple of 8: the
  // stream's 64-bit words are aligned.
  const BitstreamPtr bits(stream_open(out.data() + base + kBlockHeaderBytes, capacity));
  if (!bits) throw std::bad_alloc();
  zfp_stream_set_bit_stream(zs.get(), bits.get());
  zfp_stream_rewind(zs.get());
  const std::size_t written = zfp_compress(zs.get(), field.get());
  if (written == 0 || written > capacity) {
    out.resize(base);
    return 0;
  }
  write_header(out, base, Format::kZfp, dtype, count, zfp_stream_mode(zs.get()), round8(written));
  out.resize(base + kBlockHeaderBytes + round8(written));
  return out.size() - base;
}

// The zfp mode word a bound gives (what compress() writes into a block's header).
std::uint64_t mode_of(const ErrorBound& bound) {
  const StreamPtr zs = open_stream();
  if (bound.kind == ErrorBound::Kind::kAbsolute)
    zfp_stream_set_accuracy(zs.get(), bound.value);
  else
    zfp_stream_set_precision(zs.get(), static_cast<unsigned>(bound.value));
  return zfp_stream_mode(zs.get());
}

// `mode`: the receiver's own (mode_of of the bound both sides call with), never the header's —
// zfp trusts its mode's parameters, and a corrupt one made it read wild addresses (fuzz_zfp_block).
void decode_zfp(const std::uint8_t* payload, std::size_t size, std::uint64_t mode, void* data, std::size_t count,
                DType dtype) {
  const StreamPtr zs = open_stream();
  if (zfp_stream_set_mode(zs.get(), mode) == zfp_mode_null)
    throw CommError(fmt::format("compressed block: invalid zfp mode {:#x}", mode));
  // zfp reads the stream in 64-bit words without bounds checks, as far as the mode lets a stream
  // of `count` values go: a malformed stream from a peer could read past the payload. So the
  // stream is decoded from an aligned, zero-padded copy of the largest size zfp can read, and a
  // stream that used more than it was sent is refused below.
  const FieldPtr field = field_1d(data, dtype, count);
  const std::size_t most = std::max(size, zfp_stream_maximum_size(zs.get(), field.get()));
  std::vector<std::uint64_t> padded((most + 7) / 8 + 1, 0);
  std::memcpy(padded.data(), payload, size);
  const BitstreamPtr bits(stream_open(padded.data(), padded.size() * sizeof(std::uint64_t)));
  if (!bits) throw std::bad_alloc();
  zfp_stream_set_bit_stream(zs.get(), bits.get());
  zfp_stream_rewind(zs.get());
  const std::size_t read = zfp_decompress(zs.get(), field.get());
  if (read == 0 || read > size)
    throw CommError(fmt::format("compressed block: zfp stream of {} bytes is malformed", size));
}

}  // namespace

bool compressible(DType dtype) { return dtype == DType::f32 || dtype == DType::f64; }

ErrorBound parse_error_bound(std::string_view text, const std::string& field) {
  const std::size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  ErrorBound bound;
  if (kind == "abs" || kind == "absolute")
    bound.kind = ErrorBound::Kind::kAbsolute;
  else if (kind == "prec" || kind == "precision")
    bound.kind = ErrorBound::Kind::kPrecision;
  else
    throw InputError(field, fmt::format("error bound '{}' must be abs:<tolerance> (e.g. abs:1e-3) or "
                                        "prec:<bits> (e.g. prec:16)",
                                        text));
  const std::string number(colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1));
  char* end = nullptr;
  errno = 0;
  bound.value = number.empty() ? 0 : std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || errno == ERANGE)
    throw InputError(field, fmt::format("error bound '{}': '{}' is not a number", text, number));
  check_value(bound, ZFP_MAX_PREC, field);
  return bound;
}

std::string to_string(const ErrorBound& bound) {
  return bound.kind == ErrorBound::Kind::kAbsolute ? fmt::format("abs:{}", bound.value)
                                                   : fmt::format("prec:{}", bound.value);
}

void validate_bound(const ErrorBound& bound, DType dtype, const std::string& field) {
  if (!compressible(dtype))
    throw InputError(field, fmt::format("dtype {} cannot be compressed: only f32 and f64", rt::to_string(dtype)));
  if (bound.kind != ErrorBound::Kind::kAbsolute && bound.kind != ErrorBound::Kind::kPrecision)
    throw InputError(field, "unknown error bound kind");
  check_value(bound, type_bits(dtype), field);
}

std::size_t max_block_bytes(std::size_t count, DType dtype) {
  // A block is never larger than the raw one: encode() falls back to it.
  return kBlockHeaderBytes + round8(count * dtype_bytes(dtype));
}

std::size_t compress(const void* data, std::size_t count, DType dtype, const ErrorBound& bound,
                     std::vector<std::uint8_t>& out, void* decoded) {
  validate_bound(bound, dtype, "bound");
  if (out.size() % 8 != 0) throw std::logic_error("compressed::compress: output not 8-byte aligned");
  const std::size_t base = out.size();
  const std::size_t esz = dtype_bytes(dtype);
  const std::size_t raw_block = max_block_bytes(count, dtype);
  const bool f32 = dtype == DType::f32;
  auto store_raw = [&] {
    out.resize(base);
    const std::size_t n = append_raw(data, count, dtype, out, base);
    if (decoded != nullptr && count > 0) std::memmove(decoded, data, count * esz);  // data read: may overlap
    return n;
  };
  if (count == 0 || !(f32 ? all_finite<float>(data, count) : all_finite<double>(data, count))) return store_raw();
  if (bound.kind == ErrorBound::Kind::kPrecision) {
    const std::size_t n = encode(data, count, dtype, bound.kind, bound.value, out, base);
    if (n == 0 || n >= raw_block) return store_raw();
    if (decoded != nullptr) decompress(out.data() + base, n, decoded, count, dtype, bound);
    return n;
  }
  // Absolute: zfp at the tolerance, decoded and checked here; the elements it misses (zfp's
  // block-floating-point drops small values next to huge ones) are stored exactly as patches.
  const std::size_t n = encode(data, count, dtype, bound.kind, bound.value, out, base);
  if (n == 0 || n >= raw_block) return store_raw();
  std::vector<std::uint8_t> scratch;
  void* check = decoded;  // the caller's buffer unless it overlaps the input
  const auto* d0 = static_cast<const std::uint8_t*>(data);
  const auto* c0 = static_cast<const std::uint8_t*>(decoded);
  const auto addr = [](const std::uint8_t* q) { return reinterpret_cast<std::uintptr_t>(q); };
  if (decoded == nullptr || (addr(c0) < addr(d0 + count * esz) && addr(d0) < addr(c0 + count * esz))) {
    scratch.resize(count * esz);
    check = scratch.data();
  }
  decompress(out.data() + base, n, check, count, dtype, bound);
  const std::size_t limit = (raw_block - n) / (sizeof(std::uint64_t) + esz);  // more patches: raw is smaller
  const auto where = f32 ? misses<float>(data, check, count, bound.value, limit)
                         : misses<double>(data, check, count, bound.value, limit);
  if (where.size() > limit) return store_raw();
  if (!where.empty()) {
    append_patches(data, dtype, where, out, base);
    if (out.size() - base >= raw_block) return store_raw();
    for (const std::uint64_t i : where) std::memcpy(static_cast<std::uint8_t*>(check) + i * esz, d0 + i * esz, esz);
  }
  if (check != decoded && decoded != nullptr) std::memmove(decoded, check, count * esz);
  return out.size() - base;
}

void decompress(const void* bytes, std::size_t size, void* data, std::size_t count, DType dtype,
                const ErrorBound& bound) {
  if (size < kBlockHeaderBytes)
    throw CommError(fmt::format("compressed block of {} bytes is shorter than its header", size));
  Header h;
  std::memcpy(&h, bytes, sizeof h);
  if (h.magic != kMagic) throw CommError("compressed block: bad magic (not a block of this codec)");
  if (h.dtype != static_cast<std::uint8_t>(dtype) || h.count != count)
    throw CommError(fmt::format("compressed block holds {} elements of dtype #{}, expected {} of {}", h.count, h.dtype,
                                count, rt::to_string(dtype)));
  const auto* payload = static_cast<const std::uint8_t*>(bytes) + kBlockHeaderBytes;
  const std::size_t payload_size = size - kBlockHeaderBytes;
  const std::size_t raw = count * dtype_bytes(dtype);
  switch (static_cast<Format>(h.format)) {
    case Format::kEmpty:
      if (count != 0) break;
      return;
    case Format::kRaw:
      if (payload_size < raw) break;
      if (raw > 0) std::memcpy(data, payload, raw);
      return;
    case Format::kZfp: {
      const std::uint64_t esz = dtype_bytes(dtype);
      if (h.stream_bytes % 8 != 0 || h.stream_bytes > payload_size ||
          h.patches > (payload_size - h.stream_bytes) / (sizeof(std::uint64_t) + esz) || h.patches > count)
        break;
      const std::uint64_t mode = mode_of(bound);
      if (h.mode != mode)
        throw CommError(
            fmt::format("compressed block: made with zfp mode {:#x}, this rank decodes {} as {:#x} (the "
                        "ranks disagree on the error bound, or the block is corrupt)",
                        h.mode, to_string(bound), mode));
      decode_zfp(payload, static_cast<std::size_t>(h.stream_bytes), mode, data, count, dtype);
      const std::uint8_t* indices = payload + h.stream_bytes;
      const std::uint8_t* values = indices + h.patches * sizeof(std::uint64_t);
      for (std::uint64_t k = 0; k < h.patches; ++k) {
        std::uint64_t i = 0;
        std::memcpy(&i, indices + k * sizeof i, sizeof i);
        if (i >= count) throw CommError(fmt::format("compressed block: patch index {} beyond {} elements", i, count));
        std::memcpy(static_cast<std::uint8_t*>(data) + i * esz, values + k * esz, esz);
      }
      return;
    }
  }
  throw CommError(
      fmt::format("compressed block: format {} does not fit {} bytes for {} elements", h.format, size, count));
}

}  // namespace chorus::rt::compressed
