// Compressed blocks as a peer sends them (rt/compression/zfp_codec.h). The input gives a bound,
// a dtype and values; they are compressed, the absolute bound is checked on the decoded values
// (the codec's guarantee), then the block is corrupted at input-chosen places and decoded again:
// a corrupt block must decode or throw chorus::rt::CommError — never crash, read out of bounds
// (zfp reads its stream unchecked: the codec pads it) or hang.
#include <cmath>
#include <cstring>
#include <vector>

#include "fuzz_target.h"
#include "rt/compression/zfp_codec.h"
#include "rt/errors.h"

namespace cz = chorus::rt::compressed;
using chorus::rt::DType;

static void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_zfp_block: contract broken: %s\n", what);
    std::abort();
  }
}

template <typename T>
static void round_trip(const std::string& input, DType dtype, const cz::ErrorBound& bound) {
  const std::size_t count = std::min<std::size_t>((input.size() - 4) / sizeof(T), 1024);
  std::vector<T> x(count);
  if (count > 0) std::memcpy(x.data(), input.data() + 4, count * sizeof(T));
  std::vector<std::uint8_t> block;
  cz::compress(x.data(), count, dtype, bound, block);
  std::vector<T> y(count);
  cz::decompress(block.data(), block.size(), y.data(), count, dtype, bound);
  if (bound.kind == cz::ErrorBound::Kind::kAbsolute)
    for (std::size_t i = 0; i < count; ++i)
      if (std::isfinite(x[i]))
        check(std::fabs(static_cast<double>(y[i]) - static_cast<double>(x[i])) <= bound.value, "absolute bound");
  // Corrupt: XOR input bytes into the block at positions the input picks, then decode.
  for (std::size_t k = 0; k + 2 < input.size() && k < 48; k += 3) {
    const std::size_t at =
        (static_cast<std::uint8_t>(input[k]) * 256u + static_cast<std::uint8_t>(input[k + 1])) % block.size();
    block[at] ^= static_cast<std::uint8_t>(input[k + 2]) | 1u;
    try {
      cz::decompress(block.data(), block.size(), y.data(), count, dtype, bound);
    } catch (const chorus::rt::CommError&) {
    }
  }
  try {  // a block cut short
    cz::decompress(block.data(), block.size() / 2, y.data(), count, dtype, bound);
  } catch (const chorus::rt::CommError&) {
  }
}

static void parse(const std::string& input) {
  if (input.size() < 4) return;
  const auto mode = static_cast<std::uint8_t>(input[0]);
  const DType dtype = (mode & 1) != 0 ? DType::f64 : DType::f32;
  cz::ErrorBound bound;
  if ((mode & 2) != 0) {
    bound.kind = cz::ErrorBound::Kind::kPrecision;
    bound.value = 1 + static_cast<std::uint8_t>(input[1]) % (dtype == DType::f64 ? 64 : 32);
  } else {
    bound.kind = cz::ErrorBound::Kind::kAbsolute;
    bound.value = std::ldexp(1.0, -static_cast<int>(static_cast<std::uint8_t>(input[1]) % 60));
  }
  if (dtype == DType::f64)
    round_trip<double>(input, dtype, bound);
  else
    round_trip<float>(input, dtype, bound);
}

CHORUS_FUZZ_TARGET(parse)
