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

// NPUs are numbered with dimension 1 fastest (the ASTRA-sim convention used everywhere in chorus).
// Every group of NPUs that differ only in their coordinates along `dims` (0-based), members
// ascending, groups ordered by their smallest member. `dims` empty: every NPU alone.
std::vector<std::vector<int>> npu_groups(const Network& network, const std::vector<int>& dims);
// The NPU one step further along dimension `dim` (wrapping), the point-to-point partner of `npu`.
int next_along(const Network& network, int npu, int dim);

// Device placement: NPU i runs on server placement[i]; empty: on server i. InputError naming
// `where` unless `placement` is empty or a permutation of 0..servers-1.
void validate_placement(const std::vector<int>& placement, int servers, const std::string& where);
inline int placed(const std::vector<int>& placement, int npu) {
  return placement.empty() ? npu : placement[static_cast<std::size_t>(npu)];
}
// npu_groups with every member replaced by its server (members stay in NPU order).
std::vector<std::vector<int>> npu_groups(const Network& network, const std::vector<int>& dims,
                                         const std::vector<int>& placement);

// Checks every field; throws InputError naming `where` and the field. Also rejects
// switch dimensions whose size halving-doubling cannot handle (not a power of two).
void validate(const Network& network, const std::string& where);

}  // namespace chorus::net
