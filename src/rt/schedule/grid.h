#pragma once
// A rank grid: a world of N = P1 x ... x PD ranks seen as the dimensions of a network. Rank r
// has coordinates (c1, ..., cD) with dimension 1 varying fastest (r = c1 + P1 * (c2 + P2 * ...)),
// the convention of ASTRA-sim and Themis (dimension 1 is the innermost, e.g. the ranks of one
// package). For every dimension d the ranks that differ only in c_d form a group (rt::split),
// numbered by c_d, on a backend chosen per dimension.
#include <string>
#include <vector>

#include "net/network.h"
#include "rt/runtime.h"

namespace chorus::rt {

struct RankGrid {
  Runtime* runtime = nullptr;         // the runtime the groups are on
  std::vector<int> dims;              // P_d
  int rank = 0;                       // world rank
  std::vector<int> coords;            // c_d of this rank
  std::vector<std::string> groups;    // the rt group of this rank's dimension-d line
  std::vector<Communicator> comms;    // those groups, resolved once
  std::vector<std::string> backends;  // backend of each dimension's groups
  int size() const;
};

// Parses "2x4" (or "2x2x2"); errors name `field`.
std::vector<int> parse_grid(const std::string& text, const std::string& field = "grid");

// The network a bare grid stands for (`chorus run collective --grid`): every dimension a switch
// of 8 Gb/s (1 GB/s) per rank and 1 us step latency, slow enough that pacing dominates on one host.
net::Network grid_network(const std::vector<int>& dims);

// Creates the groups of every dimension on `runtime`: collective over its world, which must have
// exactly product(dims) ranks. `backends` holds one backend per dimension (or one for all;
// "auto" allowed). Group names are `prefix` + "-d" + dimension (1-based).
RankGrid make_rank_grid(Runtime& runtime, const std::vector<int>& dims, const std::vector<std::string>& backends,
                        const std::string& prefix = "grid");
// The same on the process's default runtime (rt::init's).
RankGrid make_rank_grid(const std::vector<int>& dims, const std::vector<std::string>& backends,
                        const std::string& prefix = "grid");

}  // namespace chorus::rt
