#pragma once
// The traffic of one training iteration (TopologyFinder's input) from the training DAG of the
// workloads module: the job's N NPUs are the N servers (one accelerator per server), numbered
// with dimension 0 fastest as everywhere in chorus. What maps to what (docs/topoopt.md,
// "Traffic from the training DAG"):
//  - all-reduce, reduce-scatter, all-gather over dimensions D: one AllReduce group per set of
//    servers that differ only in D (permutable: any ring order serves it), with the bytes of the
//    all-reduce that moves as much (a reduce-scatter or an all-gather is half of one);
//  - all-to-all over D: model-parallel transfers between every ordered pair of such a group,
//    bytes / n each (not permutable: the data has fixed owners);
//  - point-to-point on dimension d: a transfer to the next server along d.
// Groups over the same servers are merged (bytes add up); so are transfers of the same pair.
#include <string>
#include <vector>

#include "net/network.h"
#include "topoopt/traffic.h"
#include "workload/dag.h"

namespace chorus::topoopt {

// The first iteration of `dag` (nodes with iteration 0) on the NPUs of `network`; NPU i on server
// placement[i] (empty: server i), groups listing their servers in the order of their NPUs.
Traffic traffic_from_dag(const workload::Dag& dag, const net::Network& network, const std::vector<int>& placement = {});

// A zoo workload (workload/zoo.h: zoo_names()) on `servers` servers:
// its DAG on a logical network of one dimension of `servers`, or two (group x rest) when its
// model- or expert-parallel group is smaller than the job and divides it. InputError for an
// unknown name (naming `field`) or fewer than 2 servers.
Traffic zoo_traffic(const std::string& name, int servers, const std::string& field = "workload");

}  // namespace chorus::topoopt
