// Writes the sample Chakra traces of tests/data/chakra/ the way Chakra's converters write them
// (a GlobalMetadata, then one Node per operator; attributes comm_type / comm_size as int64_val,
// comm_src / comm_dst / comm_tag as int32_val, is_cpu_op as bool_val; one file per rank,
// <name>.<rank>.et). The .et files are committed, so the tests do not need this program:
//   chorus_chakra_samples tests/data/chakra
#include <fmt/format.h>
#include <fstream>
#include <initializer_list>
#include <iostream>

#include "workload/chakra/et_stream.h"

namespace {

namespace pb = chorus::chakra;

pb::Node node(std::uint64_t id, const std::string& name, pb::NodeType type, std::initializer_list<std::uint64_t> data,
              std::initializer_list<std::uint64_t> ctrl = {}) {
  pb::Node n;
  n.set_id(id);
  n.set_name(name);
  n.set_type(type);
  for (auto d : data) n.add_data_deps(d);
  for (auto d : ctrl) n.add_ctrl_deps(d);
  if (type != pb::METADATA_NODE) {
    auto* a = n.add_attr();
    a->set_name("is_cpu_op");
    a->set_bool_val(false);
  }
  return n;
}

pb::Node comp(std::uint64_t id, const std::string& name, std::uint64_t micros,
              std::initializer_list<std::uint64_t> data, std::initializer_list<std::uint64_t> ctrl = {}) {
  auto n = node(id, name, pb::COMP_NODE, data, ctrl);
  n.set_duration_micros(micros);
  return n;
}

void int64_attr(pb::Node& n, const char* name, std::int64_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int64_val(v);
}

void int32_attr(pb::Node& n, const char* name, std::int32_t v) {
  auto* a = n.add_attr();
  a->set_name(name);
  a->set_int32_val(v);
}

pb::Node all_reduce(std::uint64_t id, const std::string& name, std::int64_t bytes,
                    std::initializer_list<std::uint64_t> data) {
  auto n = node(id, name, pb::COMM_COLL_NODE, data);
  int64_attr(n, "comm_type", pb::ALL_REDUCE);
  int64_attr(n, "comm_size", bytes);
  return n;
}

pb::Node p2p(std::uint64_t id, const std::string& name, pb::NodeType type, int src, int dst, int tag,
             std::int64_t bytes, std::initializer_list<std::uint64_t> data,
             std::initializer_list<std::uint64_t> ctrl = {}) {
  auto n = node(id, name, type, data, ctrl);
  int32_attr(n, "comm_src", src);
  int32_attr(n, "comm_dst", dst);
  int32_attr(n, "comm_tag", tag);
  int64_attr(n, "comm_size", bytes);
  return n;
}

void write(const std::string& dir, const std::string& name, int rank, const std::vector<pb::Node>& nodes) {
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  const auto path = fmt::format("{}/{}.{}.et", dir, name, rank);
  std::ofstream out(path, std::ios::binary);
  out << chorus::workload::chakra_et::serialize_et(meta, nodes);
  if (!out) throw std::runtime_error("cannot write " + path);
  std::cout << path << "\n";
}

// A data-parallel training step of two layers on every rank: forward, back-propagation with
// each layer's weight gradient all-reduced as soon as it is computed, then an optimizer step
// that waits for both all-reduces. The process-group metadata node and the optimizer node come
// first in the file: the importer must order by dependencies, not by position.
std::vector<pb::Node> dp_step() {
  auto pg = node(1, "process_group", pb::METADATA_NODE, {});
  auto* a = pg.add_attr();
  a->set_name("pg_name");
  a->set_string_val("0");
  auto ar0 = all_reduce(16, "COMM_COLL_NODE_l0_ALLREDUCE", 1000, {15});
  auto* dims = ar0.add_attr();  // ASTRA-sim's default shape: five dimensions, all involved
  dims->set_name("involved_dim");
  for (int d = 0; d < 5; ++d) dims->mutable_bool_list()->add_values(true);
  return {pg,
          comp(17, "optimizer_step", 1, {16}, {13}),
          comp(10, "COMP_NODE_l0_FWD", 1, {}, {1}),
          comp(11, "COMP_NODE_l1_FWD", 2, {10}),
          comp(12, "COMP_NODE_l1_WG", 2, {11}),
          all_reduce(13, "COMM_COLL_NODE_l1_ALLREDUCE", 3000, {12}),
          comp(14, "COMP_NODE_l1_IG", 2, {11}, {12}),
          comp(15, "COMP_NODE_l0_WG", 1, {14}),
          ar0};
}

// Two pipeline stages: rank 0 sends its activations to rank 1 and receives the gradient back.
std::vector<pb::Node> p2p_step(int rank) {
  if (rank == 0)
    return {comp(0, "COMP_NODE_stage0_FWD", 1, {}), p2p(1, "send_activations", pb::COMM_SEND_NODE, 0, 1, 5, 4096, {0}),
            p2p(2, "recv_gradient", pb::COMM_RECV_NODE, 1, 0, 6, 4096, {}, {1}),
            comp(3, "COMP_NODE_stage0_IG", 2, {2})};
  return {p2p(0, "recv_activations", pb::COMM_RECV_NODE, 0, 1, 5, 4096, {}), comp(1, "COMP_NODE_stage1_FWD", 1, {0}),
          comp(2, "COMP_NODE_stage1_IG", 2, {1}), p2p(3, "send_gradient", pb::COMM_SEND_NODE, 1, 0, 6, 4096, {2})};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: chorus_chakra_samples DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  for (int rank = 0; rank < 2; ++rank) {
    write(dir, "dp_step", rank, dp_step());
    write(dir, "p2p_step", rank, p2p_step(rank));
  }
  return 0;
}
