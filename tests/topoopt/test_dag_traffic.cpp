// Traffic from the training DAG (topoopt/dag_traffic.h): a small DAG worked by hand, and the
// group structure of two zoo workloads.
#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "topoopt/dag_traffic.h"

namespace chorus::topoopt {
namespace {

workload::Node comm(CollectiveKind op, double bytes, std::vector<int> dims, int iteration = 0) {
  workload::Node n;
  n.kind = workload::NodeKind::kComm;
  n.op = op;
  n.bytes = bytes;
  n.dims = std::move(dims);
  n.iteration = iteration;
  return n;
}

TEST(DagTraffic, CollectivesAndTransfersByHand) {
  // 2 x 3 servers, dimension 0 fastest: server = x + 2 y.
  net::Network net;
  net::Dimension d;
  d.link_bandwidth_gbps = 100;
  d.kind = net::DimKind::kRing;
  d.size = 2;
  net.dims.push_back(d);
  d.size = 3;
  net.dims.push_back(d);
  workload::Dag dag;
  dag.add(comm(CollectiveKind::kAllReduce, 100, {0}));     // pairs {0,1} {2,3} {4,5}: 100 each
  dag.add(comm(CollectiveKind::kReduceScatter, 50, {0}));  // the same pairs, half an all-reduce: +25
  dag.add(comm(CollectiveKind::kAllReduce, 60, {0, 1}));   // all six: 60
  dag.add(comm(CollectiveKind::kAllToAll, 30, {1}));       // {0,2,4} {1,3,5}: 10 to each other member
  auto p2p = comm(CollectiveKind::kAllReduce, 7, {1});
  p2p.comm = workload::CommKind::kPointToPoint;  // to the next server along y: s -> s + 2 (mod 6)
  dag.add(p2p);
  dag.add(comm(CollectiveKind::kAllReduce, 999, {0, 1}, 1));  // iteration 1: not counted
  const auto t = traffic_from_dag(dag, net);
  EXPECT_EQ(t.servers, 6);
  std::map<std::vector<int>, double> groups;
  for (const auto& g : t.allreduce_groups) groups[g.servers] = g.bytes;
  EXPECT_EQ(groups, (std::map<std::vector<int>, double>{
                        {{0, 1}, 125}, {{2, 3}, 125}, {{4, 5}, 125}, {{0, 1, 2, 3, 4, 5}, 60}}));
  std::map<std::pair<int, int>, double> mp;
  for (const auto& m : t.mp) mp[{m.src, m.dst}] = m.bytes;
  std::map<std::pair<int, int>, double> expect;
  for (const auto& members : {std::vector<int>{0, 2, 4}, std::vector<int>{1, 3, 5}})
    for (int a : members)
      for (int b : members)
        if (a != b) expect[{a, b}] += 10;
  for (int s = 0; s < 6; ++s) expect[{s, (s + 2) % 6}] += 7;
  EXPECT_EQ(mp, expect);
}

TEST(DagTraffic, PlacementMapsNpusToServers) {
  // Logical 2 x 2 (NPU = x + 2 y) with NPU i on server placement[i] = 3 - i.
  net::Network net;
  net::Dimension d;
  d.link_bandwidth_gbps = 100;
  d.kind = net::DimKind::kRing;
  d.size = 2;
  net.dims = {d, d};
  workload::Dag dag;
  dag.add(comm(CollectiveKind::kAllReduce, 100, {0}));  // NPU pairs {0,1} {2,3}: servers {3,2} {1,0}
  auto p2p = comm(CollectiveKind::kAllReduce, 7, {1});
  p2p.comm = workload::CommKind::kPointToPoint;  // NPU s -> s + 2: server 3 - s -> 1 - s (mod 4)
  dag.add(p2p);
  const auto t = traffic_from_dag(dag, net, {3, 2, 1, 0});
  std::map<std::vector<int>, double> groups;
  for (const auto& g : t.allreduce_groups) groups[g.servers] = g.bytes;
  EXPECT_EQ(groups, (std::map<std::vector<int>, double>{{{3, 2}, 100}, {{1, 0}, 100}}));
  std::map<std::pair<int, int>, double> mp;
  for (const auto& m : t.mp) mp[{m.src, m.dst}] = m.bytes;
  EXPECT_EQ(mp, (std::map<std::pair<int, int>, double>{{{3, 1}, 7}, {{2, 0}, 7}, {{1, 3}, 7}, {{0, 2}, 7}}));
  EXPECT_THROW(traffic_from_dag(dag, net, {0, 1}), InputError);
}

TEST(DagTraffic, ZooModelsGiveTheirModelAndDataParallelGroups) {
  // dlrm: embeddings model-parallel over all servers (all-to-all), MLPs data-parallel (all-reduce).
  const auto d = zoo_traffic("dlrm", 16);
  ASSERT_EQ(d.allreduce_groups.size(), 1u);
  EXPECT_EQ(d.allreduce_groups[0].servers.size(), 16u);
  EXPECT_EQ(d.mp.size(), 16u * 15u);
  // transformer-1t: tensor parallel over 128 servers, so 256 servers are 2 x 128: two model-parallel
  // groups of 128 consecutive servers and 128 data-parallel pairs {i, i + 128}.
  const auto t = zoo_traffic("transformer-1t", 256);
  std::map<std::size_t, int> sizes;
  for (const auto& g : t.allreduce_groups) ++sizes[g.servers.size()];
  EXPECT_EQ(sizes, (std::map<std::size_t, int>{{2, 128}, {128, 2}}));
  EXPECT_THROW(zoo_traffic("resnet125", 16), InputError);
  EXPECT_THROW(zoo_traffic("dlrm", 1), InputError);
}

}  // namespace
}  // namespace chorus::topoopt
