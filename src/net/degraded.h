#pragma once
// A dimension of a multi-dimensional network at a fraction of its bandwidth (
// "multi-dimensional networks run slower dimensions"). Only the dimension's link bandwidth
// changes; its size, links and step latency stay, so a stage's fixed delay A_K is unchanged and
// its bandwidth term n_K x B_K grows by 1 / fraction.
#include <string>
#include <vector>

#include "net/network.h"

namespace chorus::net {

struct DimDegradation {
  int dim = 0;          // 0-based, as in `chorus sim collective`'s table
  double fraction = 1;  // of the dimension's link bandwidth, in (0, 1]
};

// "DIM:FRACTION", e.g. "1:0.5". InputError naming `field` for anything else (not two fields,
// a dimension that is not an integer, a fraction outside (0, 1]).
DimDegradation parse_dim_degradation(const std::string& text, const std::string& field);

// The network with every listed dimension at its fraction of bandwidth (a dimension listed twice
// takes both fractions). Its name gets " (dim K at F)" per degradation. InputError naming `field`
// for a dimension the network lacks, or a bandwidth the network checks reject.
Network degrade(const Network& network, const std::vector<DimDegradation>& degradations, const std::string& field);

}  // namespace chorus::net
