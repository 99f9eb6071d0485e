// Chakra execution-trace import (workload/chakra): the committed samples of tests/data/chakra
// (written by tests/chakra/make_chakra_samples.cpp following Chakra's converter conventions)
// imported and simulated with hand-derived timings, the export/import round trip, and malformed
// streams and graphs rejected with the file, byte offset or node id, and the field.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "net/presets.h"
#include "sim/dag_executor.h"
#include "workload/chakra/chakra_export.h"
#include "workload/chakra/chakra_import.h"
#include "workload/chakra/et_stream.h"
#include "workload/compute_model.h"
#include "workload/parallelism.h"
#include "workload/workload_yaml.h"
#include "workload/zoo.h"

namespace chorus {
namespace {

namespace pb = chorus::chakra;
using workload::ComputeKind;
using workload::NodeKind;

std::string chakra_data_path(const std::string& name) { return std::string(CHORUS_TEST_DATA_DIR) + "/chakra/" + name; }

std::string read_bytes(const std::string& name) {
  std::ifstream in(chakra_data_path(name), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Two NPUs on one fully-connected dimension at 8 Gb/s = 1 byte/ns, no latency: an all-reduce
// of S bytes is a reduce-scatter and an all-gather of S/2 each, S ns in all.
net::Network pair() {
  net::Network n;
  n.name = "pair";
  n.dims.push_back(net::Dimension{net::DimKind::kFullyConnected, 2, 8.0, 1, 0});
  return n;
}

TEST(Chakra, DataParallelStepImportsInDependencyOrder) {
  const auto trace = workload::chakra_et::read_et_file(chakra_data_path("dp_step.0.et"));
  EXPECT_EQ(trace.metadata.version(), "0.0.4");
  ASSERT_EQ(trace.nodes.size(), 9u);  // one metadata node + 8 operators
  workload::ChakraOptions ctrl;
  ctrl.ctrl_deps = true;
  std::string notes;
  const auto dag = workload::import_chakra(trace, pair(), ctrl, &notes);
  EXPECT_EQ(notes, "");
  EXPECT_EQ(dag.name, "dp_step");
  // The metadata node is dropped; the optimizer node, second in the file, comes last.
  const std::vector<std::string> names = {"COMP_NODE_l0_FWD",
                                          "COMP_NODE_l1_FWD",
                                          "COMP_NODE_l1_WG",
                                          "COMM_COLL_NODE_l1_ALLREDUCE",
                                          "COMP_NODE_l1_IG",
                                          "COMP_NODE_l0_WG",
                                          "COMM_COLL_NODE_l0_ALLREDUCE",
                                          "optimizer_step"};
  ASSERT_EQ(dag.nodes.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(dag.nodes[i].name, names[i]);
  const std::vector<std::vector<int>> deps = {{}, {0}, {1}, {2}, {1, 2}, {4}, {5}, {3, 6}};
  for (size_t i = 0; i < deps.size(); ++i) EXPECT_EQ(dag.nodes[i].deps, deps[i]) << names[i];
  // By default only data_deps count, as in Chakra's feeder; the file has 3 ctrl_deps (on ids
  // 17, 10, 14): l1 IG loses its dependency on l1 WG, the optimizer its one on the l1
  // all-reduce.
  const auto data_only = workload::import_chakra(trace, pair(), {}, &notes);
  EXPECT_EQ(notes, "3 ctrl_deps not followed, as in Chakra's feeder (--chakra-ctrl-deps follows them)");
  const std::vector<std::vector<int>> data_deps = {{}, {0}, {1}, {2}, {1}, {4}, {5}, {6}};
  for (size_t i = 0; i < data_deps.size(); ++i) EXPECT_EQ(data_only.nodes[i].deps, data_deps[i]) << names[i];
  EXPECT_EQ(dag.nodes[0].compute, ComputeKind::kForward);
  EXPECT_EQ(dag.nodes[2].compute, ComputeKind::kWeightGradient);
  EXPECT_EQ(dag.nodes[4].compute, ComputeKind::kInputGradient);
  EXPECT_EQ(dag.nodes[7].compute, ComputeKind::kOptimizer);
  EXPECT_DOUBLE_EQ(dag.nodes[1].duration_ns, 2000);  // 2 us
  EXPECT_EQ(dag.nodes[3].kind, NodeKind::kComm);
  EXPECT_EQ(dag.nodes[3].op, CollectiveKind::kAllReduce);
  EXPECT_DOUBLE_EQ(dag.nodes[3].bytes, 3000);
  EXPECT_EQ(dag.nodes[6].dims, (std::vector<int>{0}));  // involved_dim: 5 x true, 1 dimension here
}

TEST(Chakra, DataParallelStepTimeByHand) {
  sim::WorkloadSimOptions o;
  o.scheduler = sched::parse_scheduler("baseline");
  o.chunks_per_collective = 1;
  for (bool ctrl : {false, true}) {
    workload::ChakraOptions opt;
    opt.ctrl_deps = ctrl;
    const auto dag = workload::load_chakra(chakra_data_path("dp_step"), pair(), opt);  // prefix -> dp_step.0.et
    const auto r = sim::simulate_workload(dag, pair(), o).result;
    // l0 FWD 0..1000, l1 FWD 1000..3000, l1 WG 3000..5000; AR l1 (3000 B) 5000..8000 while
    // l1 IG 5000..7000 and l0 WG 7000..8000; AR l0 (1000 B) 8000..9000 (the compute stream idles:
    // exposed); optimizer (after both all-reduces) 9000..10000. The ctrl_deps change nothing
    // here: l1 WG has the lower index, so it runs before l1 IG anyway, and AR l0 ends after AR l1.
    EXPECT_DOUBLE_EQ(r.total_ns, 10000);
    EXPECT_DOUBLE_EQ(r.forward_compute_ns, 3000);
    EXPECT_DOUBLE_EQ(r.backward_compute_ns, 5000);
    EXPECT_DOUBLE_EQ(r.optimizer_compute_ns, 1000);
    EXPECT_DOUBLE_EQ(r.exposed_dp_comm_ns, 1000);
    EXPECT_EQ(r.comm_nodes, 2);
  }
  // Two iterations: the second starts when the first's optimizer step ends.
  workload::ChakraOptions two;
  two.iterations = 2;
  const auto r2 =
      sim::simulate_workload(workload::load_chakra(chakra_data_path("dp_step.1.et"), pair(), two), pair(), o).result;
  EXPECT_DOUBLE_EQ(r2.total_ns, 20000);
}

TEST(Chakra, SendRecvBecomePointToPointNodes) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");  // 16 x 8 x 8: ranks 0 and 1 differ in dim 0
  const auto r0 = workload::load_chakra(chakra_data_path("p2p_step.0.et"), net, {});
  ASSERT_EQ(r0.nodes.size(), 4u);
  EXPECT_EQ(r0.nodes[1].name, "send_activations");
  EXPECT_EQ(r0.nodes[1].comm, workload::CommKind::kPointToPoint);
  EXPECT_DOUBLE_EQ(r0.nodes[1].bytes, 4096);
  EXPECT_EQ(r0.nodes[1].dims, (std::vector<int>{0}));
  EXPECT_TRUE(r0.nodes[2].deps.empty());  // its only dependency is a ctrl_deps
  EXPECT_EQ(r0.nodes[3].compute, ComputeKind::kInputGradient);
  const auto r1 = workload::load_chakra(chakra_data_path("p2p_step"), net, {1, 1});  // prefix, --rank 1
  EXPECT_EQ(r1.nodes[0].name, "recv_activations");
  EXPECT_EQ(r1.nodes[3].name, "send_gradient");
  // Rank 0's file read as rank 2's: its sends come from rank 0, not 2.
  try {
    workload::ChakraOptions o;
    o.rank = 2;
    auto t = workload::chakra_et::read_et_file(chakra_data_path("p2p_step.0.et"));
    t.source = "p2p_step.et";  // no rank in the name
    workload::import_chakra(t, net, o);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("node id 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("comm_src"), std::string::npos) << e.what();
  }
}

// A DAG of roofline and fixed-time compute with all four collectives over dimension subsets,
// exported and imported again.
TEST(Chakra, ExportImportRoundTrip) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");
  workload::Dag dag;
  dag.name = "rt";
  auto add = [&](workload::Node n) { return dag.add(std::move(n)); };
  workload::Node c;
  c.name = "fwd";
  c.flops = 3e9;
  c.mem_bytes = 4096;
  const int f = add(c);
  c = {};
  c.name = "wait";
  c.duration_ns = 7000;
  c.deps = {f};
  const int w = add(c);
  int prev = w;
  const CollectiveKind ops[] = {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
                                CollectiveKind::kAllToAll};
  const std::vector<int> dims[] = {{0, 1, 2}, {0, 1}, {2}, {1, 2}};
  for (int k = 0; k < 4; ++k) {
    workload::Node m;
    m.name = fmt::format("comm{}", k);
    m.kind = NodeKind::kComm;
    m.op = ops[k];
    m.bytes = 128.0 * 1024 * (k + 1);  // all-gather: 256 KiB over 128 NPUs = 2 KiB pieces
    m.dims = dims[k];
    m.deps = {f, prev};  // the importer lists dependencies in index order
    prev = add(m);
  }
  c = {};
  c.name = "idle";
  c.duration_ns = 0;
  c.deps = {prev};
  add(c);
  auto trace = workload::chakra_et::parse_et(workload::export_chakra(dag, net), "rt.et");
  // The all-gather's comm_size is each NPU's piece, as ASTRA-sim reads it.
  for (const auto& a : trace.nodes[3].node.attr())
    if (a.name() == "comm_size") {
      EXPECT_EQ(a.int64_val(), 2048);
    }
  const auto back = workload::import_chakra(trace, net, {});
  ASSERT_EQ(back.nodes.size(), dag.nodes.size());
  for (size_t i = 0; i < dag.nodes.size(); ++i) {
    const auto& a = dag.nodes[i];
    const auto& b = back.nodes[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.kind, b.kind) << a.name;
    EXPECT_EQ(a.deps, b.deps) << a.name;
    EXPECT_DOUBLE_EQ(a.flops, b.flops) << a.name;
    EXPECT_DOUBLE_EQ(a.mem_bytes, b.mem_bytes) << a.name;
    EXPECT_DOUBLE_EQ(a.duration_ns, b.duration_ns) << a.name;
    EXPECT_EQ(a.op, b.op) << a.name;
    EXPECT_DOUBLE_EQ(a.bytes, b.bytes) << a.name;
    EXPECT_EQ(a.dims, b.dims) << a.name;
  }
  // Point-to-point nodes do not name their peer: not exportable.
  dag.nodes[2].comm = workload::CommKind::kPointToPoint;
  dag.nodes[2].dims = {0};
  EXPECT_THROW(workload::export_chakra(dag, net), InputError);
}

// Every field of every node, and the simulated run, equal after export and import.
void expect_same_dag(const workload::Dag& a, const workload::Dag& b) {
  EXPECT_EQ(a.iterations, b.iterations);
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const auto& x = a.nodes[i];
    const auto& y = b.nodes[i];
    SCOPED_TRACE(x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.compute, y.compute);
    EXPECT_EQ(x.flops, y.flops);
    EXPECT_EQ(x.mem_bytes, y.mem_bytes);
    EXPECT_EQ(x.duration_ns, y.duration_ns);
    EXPECT_EQ(x.comm, y.comm);
    EXPECT_EQ(x.op, y.op);
    EXPECT_EQ(x.bytes, y.bytes);
    EXPECT_EQ(x.dims, y.dims);
    EXPECT_EQ(x.group, y.group);
    EXPECT_EQ(x.stage, y.stage);
    EXPECT_EQ(x.layer, y.layer);
    EXPECT_EQ(x.iteration, y.iteration);
    auto sorted = [](std::vector<int> v) {  // a set: the importer lists it in index order
      std::sort(v.begin(), v.end());
      return v;
    };
    EXPECT_EQ(sorted(x.deps), sorted(y.deps));
  }
}

TEST(ChakraExport, EveryZooModelRoundTripsNodeForNodeAndInTime) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");
  for (const auto& name : workload::zoo_names()) {
    SCOPED_TRACE(name);
    auto entry = workload::zoo_model(name);
    entry.parallelism.iterations = 2;
    const auto dag = workload::build_training_dag(entry.model, entry.parallelism, net);
    const auto back = workload::import_chakra(
        workload::chakra_et::parse_et(workload::export_chakra(dag, net), name + ".0.et"), net, {});
    expect_same_dag(dag, back);
    sim::WorkloadSimOptions o;
    const auto a = sim::simulate_workload(dag, net, o).result;
    const auto b = sim::simulate_workload(back, net, o).result;
    EXPECT_GT(a.total_ns, 0);
    EXPECT_EQ(a.total_ns, b.total_ns);
    EXPECT_EQ(a.forward_compute_ns, b.forward_compute_ns);
    EXPECT_EQ(a.backward_compute_ns, b.backward_compute_ns);
    EXPECT_EQ(a.exposed_dp_comm_ns, b.exposed_dp_comm_ns);
    EXPECT_EQ(a.exposed_mp_comm_ns, b.exposed_mp_comm_ns);
  }
}

TEST(ChakraExport, OneFilePerRankEachImportingToTheSameDag) {
  net::Network net = pair();
  net.dims.push_back(net.dims[0]);  // 2 x 2: four ranks
  auto entry = workload::zoo_model("dlrm");
  entry.parallelism.iterations = 1;
  const auto dag = workload::build_training_dag(entry.model, entry.parallelism, net);
  const std::string dir = ::testing::TempDir() + "/chorus_chakra_export";
  const auto files = workload::write_chakra_traces(dag, net, dir, "dlrm");
  EXPECT_EQ(files.files, 4u);
  EXPECT_EQ(files.first, dir + "/dlrm.0.et");
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(rank);
    workload::ChakraOptions o;
    o.rank = rank;
    expect_same_dag(dag, workload::load_chakra(dir + "/dlrm", net, o));
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/dlrm.4.et"));
  // A pipeline's transfers do not name their peer: refused, naming the stages.
  auto piped = dag;
  piped.stages = 2;
  try {
    workload::export_chakra(piped, net);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("pipeline of 2 stages"), std::string::npos) << e.what();
  }
}

// --- malformed input ---------------------------------------------------------------------

std::vector<pb::Node> sample_nodes() {
  std::vector<pb::Node> v;
  for (const auto& n : workload::chakra_et::read_et_file(chakra_data_path("dp_step.0.et")).nodes) v.push_back(n.node);
  return v;
}

std::string with_nodes(const std::vector<pb::Node>& nodes) {
  pb::GlobalMetadata m;
  m.set_version("0.0.4");
  return workload::chakra_et::serialize_et(m, nodes);
}

void expect_error(const std::string& bytes, const std::vector<std::string>& needles, bool ctrl_deps = false) {
  try {
    workload::ChakraOptions o;
    o.ctrl_deps = ctrl_deps;
    workload::import_chakra(workload::chakra_et::parse_et(bytes, "bad.0.et"), pair(), o);
    ADD_FAILURE() << "no error; expected " << needles.front();
  } catch (const InputError& e) {
    for (const auto& n : needles) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

pb::Node* by_id(std::vector<pb::Node>& v, std::uint64_t id) {
  for (auto& n : v)
    if (n.id() == id) return &n;
  return nullptr;
}

TEST(Chakra, MalformedStreamsNameByteOffset) {
  const auto good = read_bytes("dp_step.0.et");
  ASSERT_EQ(good.size(), 502u);
  expect_error("", {"bad.0.et", "empty"});
  // Cut in the middle of the last node: its length prefix promises more than is left.
  const auto nodes = sample_nodes();
  const auto last_at = good.size() - nodes.back().ByteSizeLong() - 1;  // 1-byte length prefix
  expect_error(good.substr(0, good.size() - 3),
               {fmt::format("byte {}", last_at), "after node id 15", "runs past the end"});
  // A length prefix cut off (a continuation bit with nothing after it).
  expect_error(good + "\x80", {fmt::format("byte {}", good.size()), "length prefix"});
  // A length above the bound is refused before anything is read.
  expect_error(good + std::string("\xff\xff\xff\xff\x0f", 5), {"exceeds the limit"});
  // Garbage that protobuf cannot parse (a field with wire type 7).
  expect_error(good + std::string("\x02\x0f\x00", 3), {"cannot parse the Node message"});
  // A node name that is not UTF-8 (proto3 strings must be): protobuf's reason is in the error.
  expect_error(good + std::string("\x08\x08\x63\x12\x02\xff\xfe\x18\x04", 9),
               {fmt::format("byte {}", good.size()), "cannot parse the Node message", "UTF-8"});
}

TEST(Chakra, MalformedNodesNameNodeIdAndField) {
  auto v = sample_nodes();
  // chorus's own attributes (what export writes): typed and in range, or an error.
  auto with_attr = [&](std::uint64_t id, const char* name, auto set) {
    auto w = sample_nodes();
    auto* a = by_id(w, id)->add_attr();
    a->set_name(name);
    set(*a);
    return with_nodes(w);
  };
  expect_error(with_attr(12, workload::kChakraComputeKindAttr, [](pb::AttributeProto& a) { a.set_int64_val(1); }),
               {"node id 12", "field attr chorus_compute_kind", "must be string_val"});
  expect_error(
      with_attr(12, workload::kChakraComputeKindAttr, [](pb::AttributeProto& a) { a.set_string_val("sideways"); }),
      {"node id 12", "chorus_compute_kind", "'sideways' is none of forward, input_gradient"});
  expect_error(with_attr(13, workload::kChakraCommGroupAttr, [](pb::AttributeProto& a) { a.set_string_val("tp"); }),
               {"node id 13", "chorus_comm_group", "'tp' is none of dp, mp, pp"});
  expect_error(with_attr(12, workload::kChakraIterationAttr, [](pb::AttributeProto& a) { a.set_int64_val(1000000); }),
               {"node id 12", "chorus_iteration", "1000000 is not in 0..999"});
  expect_error(with_attr(12, workload::kChakraLayerAttr, [](pb::AttributeProto& a) { a.set_int64_val(-2); }),
               {"node id 12", "chorus_layer", "-2 is out of range"});

  by_id(v, 12)->set_type(static_cast<pb::NodeType>(42));
  expect_error(with_nodes(v), {"node id 12", "field type", "unknown node type 42"});

  v = sample_nodes();
  auto* ar = by_id(v, 13);
  for (int i = 0; i < ar->attr_size(); ++i)
    if (ar->attr(i).name() == "comm_size") ar->mutable_attr()->DeleteSubrange(i, 1);
  expect_error(with_nodes(v), {"node id 13", "comm_size", "missing"});

  v = sample_nodes();
  for (auto& a : *by_id(v, 13)->mutable_attr())
    if (a.name() == "comm_size") a.set_string_val("3000");
  expect_error(with_nodes(v), {"node id 13", "comm_size", "must be an integer", "string_val"});

  v = sample_nodes();
  for (auto& a : *by_id(v, 13)->mutable_attr())
    if (a.name() == "comm_type") a.set_int64_val(pb::BROADCAST);
  expect_error(with_nodes(v), {"node id 13", "comm_type", "BROADCAST", "not supported"});

  v = sample_nodes();
  by_id(v, 14)->add_data_deps(99);
  expect_error(with_nodes(v), {"node id 14", "data_deps", "unknown node id 99"});

  v = sample_nodes();
  by_id(v, 10)->add_data_deps(15);  // 10 -> 11 -> 14 -> 15 -> 10
  expect_error(with_nodes(v), {"cycle", "10 -> 11 -> 14 -> 15"});

  // ctrl_deps are checked the same way when followed (and not looked at otherwise).
  v = sample_nodes();
  by_id(v, 14)->add_ctrl_deps(98);
  expect_error(with_nodes(v), {"node id 14", "ctrl_deps", "unknown node id 98"}, true);
  EXPECT_NO_THROW(workload::import_chakra(workload::chakra_et::parse_et(with_nodes(v), "ok.et"), pair(), {}));

  v = sample_nodes();
  by_id(v, 11)->add_data_deps(11);
  expect_error(with_nodes(v), {"node id 11", "data_deps", "itself"});

  v = sample_nodes();
  by_id(v, 15)->set_id(12);
  expect_error(with_nodes(v), {"node id 12", "duplicate"});

  v = sample_nodes();
  for (auto& a : *by_id(v, 16)->mutable_attr())
    if (a.name() == "involved_dim") a.mutable_bool_list()->Clear();
  expect_error(with_nodes(v), {"node id 16", "involved_dim", "selects no dimension"});
}

TEST(Chakra, AnAllGathersSizeIsItsPieceTimesTheInvolvedDimsRanks) {
  const auto net = *net::find_preset("3D-SW_SW_SW_homo");  // 16 x 8 x 8
  pb::Node n;
  n.set_id(5);
  n.set_type(pb::COMM_COLL_NODE);
  auto attr = [&](const char* name) {
    auto* a = n.add_attr();
    a->set_name(name);
    return a;
  };
  attr("comm_type")->set_int64_val(pb::ALL_GATHER);
  attr("comm_size")->set_uint64_val(1024);  // any integer type is read
  auto* involved = attr("involved_dim")->mutable_bool_list();
  for (bool b : {true, true, false}) involved->add_values(b);
  const auto dag = workload::import_chakra(workload::chakra_et::parse_et(with_nodes({n}), "ag.et"), net, {});
  ASSERT_EQ(dag.nodes.size(), 1u);
  EXPECT_EQ(dag.nodes[0].dims, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(dag.nodes[0].bytes, 1024.0 * 16 * 8);  // pieces of 1 KiB from 128 NPUs
  EXPECT_EQ(dag.nodes[0].name, "node 5");
}

}  // namespace
}  // namespace chorus

namespace chorus {
namespace {

// What PyTorch-converted traces contain besides the converter samples: host-side collective
// calls, collectives chorus lacks, remote-memory nodes, roofline compute nodes.
TEST(Chakra, PytorchConvertedNodesBecomeComputeOrAreSkippedByRequest) {
  auto node = [](std::uint64_t id, pb::NodeType type, std::initializer_list<std::uint64_t> deps) {
    pb::Node n;
    n.set_id(id);
    n.set_type(type);
    for (auto d : deps) n.add_data_deps(d);
    return n;
  };
  auto attr = [](pb::Node& n, const char* name) {
    auto* a = n.add_attr();
    a->set_name(name);
    return a;
  };
  auto call = node(1, pb::COMM_COLL_NODE, {});  // c10d::broadcast_ on the CPU thread
  call.set_duration_micros(85);
  attr(call, "is_cpu_op")->set_bool_val(true);
  auto kernel = node(2, pb::COMM_COLL_NODE, {1});  // the NCCL broadcast kernel
  attr(kernel, "is_cpu_op")->set_bool_val(false);
  attr(kernel, "comm_type")->set_int64_val(pb::BROADCAST);
  attr(kernel, "comm_size")->set_int64_val(212480);
  auto load = node(3, pb::MEM_LOAD_NODE, {2});
  attr(load, "tensor_size")->set_uint64_val(3110);
  auto comp = node(4, pb::COMP_NODE, {3});
  attr(comp, "num_ops")->set_int64_val(624000000);
  attr(comp, "tensor_size")->set_uint64_val(100);
  const auto bytes = with_nodes({call, kernel, load, comp});
  expect_error(bytes, {"node id 2", "comm_type", "BROADCAST"});
  workload::ChakraOptions o;
  o.skip_unsupported = true;
  std::string notes;
  const auto dag = workload::import_chakra(workload::chakra_et::parse_et(bytes, "v.et"), pair(), o, &notes);
  EXPECT_EQ(notes, "1 BROADCAST node(s) skipped");
  ASSERT_EQ(dag.nodes.size(), 3u);
  EXPECT_EQ(dag.nodes[0].kind, NodeKind::kCompute);
  EXPECT_DOUBLE_EQ(dag.nodes[0].duration_ns, 85000);
  EXPECT_EQ(dag.nodes[1].deps, (std::vector<int>{0}));  // inherited through the skipped kernel
  // A100 roofline: 3110 bytes at 1555 GB/s = 2 ns; 624 MFLOP at 312 TFLOP/s = 2000 ns.
  const workload::ComputeModel a100;
  EXPECT_DOUBLE_EQ(a100.node_time_ns(dag.nodes[1]), 2.0);
  EXPECT_DOUBLE_EQ(a100.node_time_ns(dag.nodes[2]), 2000.0);
}

}  // namespace
}  // namespace chorus
