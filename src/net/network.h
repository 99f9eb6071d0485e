#pragma once
// A multi-dimensional network P_1 x P_2 x ... x P_D (Themis Sec. 2.3).
#include <cstdint>
#include <string>
#include <vector>

#include "net/dimension.h"

namespace chorus::net {

struct Network {
  std::string name;
  std::vector<Dimension> dims;

  int num_dims() const { return static_cast<int>(dims.size()); }
  std::uint64_t num_npus() const;
  double total_bandwidth_gbps() const;  // sum of aggregate bandwidth over all dimensions
  std::string shape() const;            // "16x8x8"
};

// Checks every field; throws InputError naming `where` and the field. Also rejects
// switch dimensions whose size halving-doubling cannot handle (not a power of two).
void validate(const Network& network, const std::string& where);

}  // namespace chorus::net
