#pragma once
// The traffic TopologyFinder serves (TopoOpt Sec. 4, Algorithm 1's inputs T_AllReduce and T_MP):
// AllReduce groups, whose servers may be put in any ring order, and model-parallel transfers,
// which go between fixed servers. Read from a JSON traffic file or built in (the DLRM example of
// Sec. 2.2). Format and the traffic each entry stands for: docs/topoopt.md, "Traffic files".
#include <string>
#include <vector>

namespace chorus::topoopt {

struct AllReduceGroup {
  std::vector<int> servers;  // distinct, in the order given (the label order of the ring rules)
  double bytes = 0;          // the all-reduced buffer, per server
};

struct MpTransfer {
  int src = 0;
  int dst = 0;
  double bytes = 0;
};

struct Traffic {
  int servers = 0;
  std::vector<AllReduceGroup> allreduce_groups;
  std::vector<MpTransfer> mp;
};

// Bytes a ring all-reduce of the group puts on the wire, summed over its servers: each of the n
// servers sends 2 (n - 1) / n of the buffer (reduce-scatter, then all-gather).
double allreduce_wire_bytes(const AllReduceGroup& group);

// Parses a traffic file: {"allreduce_groups": [{"servers": [..], "bytes": B}], "mp": [[src, dst,
// bytes], ...]}. Servers must lie in [0, servers). Errors (InputError) name `source` and the field,
// e.g. "t.json: mp[3][1]: server 17 is outside 0..15".
Traffic parse_traffic_json(const std::string& text, int servers, const std::string& source);
Traffic load_traffic_file(const std::string& path, int servers);

// Built-in traffic by name (`chorus topo find --workload NAME`): dlrm-example (16 servers; `servers`
// 0 or 16), or a zoo workload's first iteration on `servers` servers (dag_traffic.h). InputError
// lists the names.
Traffic builtin_traffic(const std::string& name, int servers);
std::vector<std::string> builtin_traffic_names();

// Sec. 2.2's DLRM: 16 servers, one AllReduce group of all of them (4 GB), embedding tables
// E0..E3 on S0, S3, S8, S13 exchanging 32 MB with every other server in both directions.
Traffic dlrm_example();

}  // namespace chorus::topoopt
