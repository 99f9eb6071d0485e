#pragma once
// FNV-1a, 64-bit (Fowler, Noll, Vo): a fast, non-cryptographic hash, for telling sequences apart
// (ranks comparing what they did) and for hash tables. Values are not stable across chorus
// versions and are never stored.
#include <cstddef>
#include <cstdint>

namespace chorus {

class Fnv1a {
 public:
  // Byte by byte, as the algorithm defines it.
  Fnv1a& bytes(const void* data, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) h_ = (h_ ^ c[i]) * kPrime;
    return *this;
  }
  // A whole integer in one step (a word-wise variant: one multiply per value, for hot paths).
  Fnv1a& word(std::uint64_t v) {
    h_ = (h_ ^ v) * kPrime;
    return *this;
  }
  std::uint64_t digest() const { return h_; }

 private:
  static constexpr std::uint64_t kPrime = 1099511628211ull;
  std::uint64_t h_ = 14695981039346656037ull;  // the offset basis
};

}  // namespace chorus
