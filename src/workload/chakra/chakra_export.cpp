#include "workload/chakra/chakra_export.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>

#include "core/error.h"
#include "core/text_file.h"
#include "workload/chakra/et_stream.h"

namespace chorus::workload {
namespace {

namespace pb = chorus::chakra;

// `v` as a Chakra integer field: whole and below 2^63 (the int64 attributes' range), else an
// InputError naming the node and the field.
std::int64_t whole(double v, const std::string& at, const std::string& field, const char* unit) {
  if (!(v >= 0 && v < 9.2e18) || v != std::floor(v))
    throw InputError(at, fmt::format("field {}: {} is not a whole number of {} below 2^63 (Chakra's integer fields)",
                                     field, v, unit));
  return static_cast<std::int64_t>(v);
}

}  // namespace

std::string export_chakra(const Dag& dag, const net::Network& network, long long rank, long long peer_offset) {
  if (dag.stages > 1)
    throw InputError(dag.name,
                     fmt::format("a pipeline of {} stages cannot be exported: its stage-to-stage transfers are "
                                 "point to point, and the DAG does not name the peer ranks",
                                 dag.stages));
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  std::vector<pb::Node> nodes;
  for (std::size_t i = 0; i < dag.nodes.size(); ++i) {
    const auto& n = dag.nodes[i];
    const std::string at = fmt::format("{}: node {} ('{}')", dag.name, i, n.name);
    pb::Node m;
    m.set_id(i);
    m.set_name(n.name);
    for (int d : n.deps) m.add_data_deps(static_cast<std::uint64_t>(d));
    auto attr = [&](const char* name) {
      auto* a = m.add_attr();
      a->set_name(name);
      return a;
    };
    attr("is_cpu_op")->set_bool_val(false);
    auto chorus_attrs = [&] {
      if (n.layer >= 0) attr(kChakraLayerAttr)->set_int64_val(n.layer);
      attr(kChakraIterationAttr)->set_int64_val(n.iteration);
    };
    if (n.kind == NodeKind::kCompute) {
      m.set_type(pb::COMP_NODE);
      if (n.duration_ns > 0) {
        const double us = n.duration_ns / 1000;
        if (us != std::floor(us))
          throw InputError(
              at, fmt::format("field duration: {} ns is not whole microseconds (Chakra's unit; for an ASTRA-sim "
                              "text workload, --ns-per-cycle 1000 writes cycles as microseconds, as Chakra's "
                              "text converter does)",
                              n.duration_ns));
        m.set_duration_micros(static_cast<std::uint64_t>(whole(us, at, "duration", "microseconds")));
      } else if (n.duration_ns < 0) {
        attr("num_ops")->set_int64_val(whole(n.flops, at, "flops (num_ops)", "FLOPs"));
        attr("tensor_size")
            ->set_uint64_val(static_cast<std::uint64_t>(whole(n.mem_bytes, at, "mem_bytes (tensor_size)", "bytes")));
      }
      attr(kChakraComputeKindAttr)->set_string_val(std::string(to_string(n.compute)));
      chorus_attrs();
      nodes.push_back(std::move(m));
      continue;
    }
    if (n.comm == CommKind::kPointToPoint && rank >= 0 && n.peer >= 0 &&
        (n.op == CollectiveKind::kSend || n.op == CollectiveKind::kRecv)) {
      const bool send = n.op == CollectiveKind::kSend;
      m.set_type(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
      attr("comm_src")->set_int64_val(send ? rank : peer_offset + n.peer);
      attr("comm_dst")->set_int64_val(send ? peer_offset + n.peer : rank);
      attr("comm_size")->set_int64_val(whole(n.bytes, at, "bytes (comm_size)", "bytes"));
      attr(kChakraCommGroupAttr)->set_string_val(std::string(to_string(n.group)));
      chorus_attrs();
      nodes.push_back(std::move(m));
      continue;
    }
    if (n.comm == CommKind::kPointToPoint)
      throw InputError(at,
                       "field comm: point-to-point nodes cannot be exported: every rank's trace is this one DAG, "
                       "and a send's peer differs from rank to rank (a capture's sends and recvs are simulated "
                       "by chorus sim workload)");
    m.set_type(pb::COMM_COLL_NODE);
    pb::CollectiveCommType type = pb::ALL_REDUCE;
    switch (n.op) {
      case CollectiveKind::kAllReduce:
        type = pb::ALL_REDUCE;
        break;
      case CollectiveKind::kAllGather:
        type = pb::ALL_GATHER;
        break;
      case CollectiveKind::kReduceScatter:
        type = pb::REDUCE_SCATTER;
        break;
      case CollectiveKind::kAllToAll:
        type = pb::ALL_TO_ALL;
        break;
      default:
        throw InputError(at, fmt::format("field op: a {} node cannot be exported", to_string(n.op)));
    }
    attr("comm_type")->set_int64_val(type);
    double group = 1;
    for (int d : n.dims) group *= network.dims[static_cast<size_t>(d)].size;
    // ASTRA-sim's comm_size is what each NPU holds at the start; chorus sizes an all-gather
    // by its result.
    const double size = n.op == CollectiveKind::kAllGather ? n.bytes / group : n.bytes;
    attr("comm_size")->set_int64_val(whole(size, at, "bytes (comm_size)", "bytes"));
    auto* dims = attr("involved_dim")->mutable_bool_list();
    for (int d = 0; d < network.num_dims(); ++d)
      dims->add_values(std::find(n.dims.begin(), n.dims.end(), d) != n.dims.end());
    attr(kChakraCommGroupAttr)->set_string_val(std::string(to_string(n.group)));
    chorus_attrs();
    nodes.push_back(std::move(m));
  }
  return chakra_et::serialize_et(meta, nodes);
}

ChakraExportFiles write_chakra_traces(const Dag& dag, const net::Network& network, const std::string& dir,
                                      const std::string& name) {
  ChakraExportFiles out;
  const std::string bytes = export_chakra(dag, network);
  namespace fs = std::filesystem;
  auto path = [&](std::uint64_t rank) { return (fs::path(dir) / fmt::format("{}.{}.et", name, rank)).string(); };
  out.first = path(0);
  ensure_writable_dir(dir);
  write_text_file(out.first, bytes);
  for (std::uint64_t r = 1; r < network.num_npus(); ++r) {
    const auto p = path(r);
    std::error_code ec;
    fs::remove(p, ec);
    fs::create_hard_link(out.first, p, ec);
    if (ec) write_text_file(p, bytes);
  }
  out.files = static_cast<std::size_t>(network.num_npus());
  out.bytes = bytes.size();
  out.nodes = dag.nodes.size();
  return out;
}

ChakraExportFiles write_chakra_rank_traces(const std::vector<Dag>& by_rank, const net::Network& network,
                                           const std::string& dir, const std::string& name) {
  ChakraExportFiles out;
  const auto captured = static_cast<long long>(by_rank.size());
  ensure_writable_dir(dir);
  for (long long r = 0; r < static_cast<long long>(network.num_npus()); ++r) {
    const auto& dag = by_rank[static_cast<std::size_t>(r % captured)];
    const std::string bytes = export_chakra(dag, network, r, r / captured * captured);
    const auto path = (std::filesystem::path(dir) / fmt::format("{}.{}.et", name, r)).string();
    write_text_file(path, bytes);
    if (r == 0) out.first = path;
    out.bytes = std::max(out.bytes, bytes.size());
    out.nodes = std::max(out.nodes, dag.nodes.size());
  }
  out.files = static_cast<std::size_t>(network.num_npus());
  return out;
}

}  // namespace chorus::workload
