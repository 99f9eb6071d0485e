#pragma once
// TopologyFinder (TopoOpt Sec. 4.1, Algorithm 1): the direct-connect topology and routing of N
// servers of degree d for a job's traffic. Step 1 splits the degree between the AllReduce and
// model-parallel (MP) sub-topologies by their share of the bytes; step 2 gives each AllReduce
// group rings chosen by TotientPerms + TopPermutations, routed by CoinChangeMod; step 3 adds
// d_MP rounds of maximum-weight matching on the MP demand, halving the demand of every pair a
// round links; step 4 routes the MP transfers on shortest paths of the union. Where this differs
// from the paper's pseudocode, and why: docs/topoopt.md.
#include <string>
#include <utility>
#include <vector>

#include "net/graph/graph_network.h"

#include "topoopt/traffic.h"

namespace chorus::topoopt {

struct FinderOptions {
  bool primes_only = false;  // TotientPerms candidates restricted to 1 and primes (large groups)
  bool route_mp = true;      // step 4; without it mp_routes is empty and mp_direct_bytes, mp_byte_hops are 0
};

struct GroupRings {
  int group = -1;                 // index into Traffic::allreduce_groups; -1: the connectivity ring
  std::vector<int> servers;       // label order of the ring rules
  int degree = 0;                 // d_k
  std::vector<int> generators;    // the d_k rings picked (p: member j -> member j + p)
  double mp_satisfied_bytes = 0;  // MP bytes these rings gave a direct link (TopPermutations' metric)
  int max_hops = 0;               // CoinChangeMod: the most ring hops between two members
};

struct MpRoute {
  int src = 0;
  int dst = 0;
  double bytes = 0;       // the transfer's bytes (transfers of the same pair are summed)
  std::vector<int> path;  // servers from src to dst, both included
  int hops() const { return static_cast<int>(path.size()) - 1; }
};

struct Topology {
  int servers = 0;
  int degree = 0;
  int degree_allreduce = 0;                                 // d_AllReduce after step 1
  int degree_mp = 0;                                        // d_MP
  std::vector<std::pair<int, int>> edges;                   // directed links; a pair listed twice is two links
  std::vector<GroupRings> allreduce;                        // one entry per group that received degree
  std::vector<std::vector<std::pair<int, int>>> matchings;  // step 3, one list of pairs per round
  std::vector<MpRoute> mp_routes;                           // per (src, dst) pair with bytes > 0, sorted
  double mp_bytes = 0;                                      // all MP bytes
  double mp_direct_bytes = 0;                               // MP bytes on a one-hop route
  double mp_byte_hops = 0;                                  // sum of bytes x hops
};

// Throws InputError for N < 2, d < 1, or traffic on another server count.
Topology topology_finder(int servers, int degree, const Traffic& traffic, const FinderOptions& options = {});

// The topology as a fabric for the flow-level model: its directed links at `gbps` each (net::direct_connect)
// and, per AllReduce group that received degree, the rings of its generators (the connectivity
// ring carries no all-reduce of its own and is not listed).
net::GraphNetwork topology_fabric(const Topology& topology, double gbps);

// Fewest-hop path from `src` to `dst` over directed `edges` (ties: the lowest-numbered
// predecessor), servers listed from src to dst; empty if unreachable.
std::vector<int> shortest_path(int servers, const std::vector<std::pair<int, int>>& edges, int src, int dst);

}  // namespace chorus::topoopt
