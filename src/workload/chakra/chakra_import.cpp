#include "workload/chakra/chakra_import.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <optional>
#include <queue>
#include <regex>

#include "core/error.h"
#include "workload/chakra/chakra_export.h"

namespace chorus::workload {
namespace {

namespace pb = chorus::chakra;
using Attr = pb::AttributeProto;

// The rank a file name carries (`name.<rank>.et`), or -1.
int rank_in_name(const std::string& path) {
  static const std::regex re(R"(.*\.([0-9]{1,9})\.et$)");
  std::smatch m;
  const auto name = std::filesystem::path(path).filename().string();
  return std::regex_match(name, m, re) ? std::stoi(m[1].str()) : -1;
}

std::string value_case_name(const Attr& a) {
  const auto* field = Attr::descriptor()->FindFieldByNumber(static_cast<int>(a.value_case()));
  return field ? field->name() : "no value";
}

// One node being imported: its messages' facts and where to report errors.
class NodeReader {
 public:
  NodeReader(const pb::Node& node, std::string at) : node_(node), at_(std::move(at)) {
    for (const auto& a : node.attr()) attrs_.emplace(a.name(), &a);  // the first of a repeated name wins
  }
  const std::string& at() const { return at_; }
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(at_, fmt::format("field {}: {}", field, what));
  }
  const Attr* find(const std::string& name) const {
    auto it = attrs_.find(name);
    return it == attrs_.end() ? nullptr : it->second;
  }
  // An integer attribute of any of the schema's integer types (converters write int64_val,
  // other producers uint64 or int32).
  std::optional<std::int64_t> integer(const std::string& name) const {
    const Attr* a = find(name);
    if (!a) return std::nullopt;
    switch (a->value_case()) {
      case Attr::kInt32Val:
        return a->int32_val();
      case Attr::kInt64Val:
        return a->int64_val();
      case Attr::kUint32Val:
        return a->uint32_val();
      case Attr::kSint32Val:
        return a->sint32_val();
      case Attr::kSint64Val:
        return a->sint64_val();
      case Attr::kFixed32Val:
        return a->fixed32_val();
      case Attr::kSfixed32Val:
        return a->sfixed32_val();
      case Attr::kSfixed64Val:
        return a->sfixed64_val();
      case Attr::kUint64Val:
      case Attr::kFixed64Val: {
        const std::uint64_t v = a->value_case() == Attr::kUint64Val ? a->uint64_val() : a->fixed64_val();
        if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
          fail("attr " + name, fmt::format("value {} is too large", v));
        return static_cast<std::int64_t>(v);
      }
      default:
        fail("attr " + name, fmt::format("must be an integer, found {}", value_case_name(*a)));
    }
  }
  std::int64_t non_negative(const std::string& name, std::int64_t v) const {
    if (v < 0) fail("attr " + name, fmt::format("must be >= 0, got {}", v));
    return v;
  }
  std::int64_t required(const std::string& name) const {
    auto v = integer(name);
    if (!v) fail("attr " + name, fmt::format("missing (a {} needs it)", pb::NodeType_Name(node_.type())));
    return *v;
  }
  // A string attribute that must be one of `names` (their index), or nothing.
  template <std::size_t N>
  std::optional<std::size_t> one_of(const std::string& name, const std::string_view (&names)[N]) const {
    const Attr* a = find(name);
    if (!a) return std::nullopt;
    if (a->value_case() != Attr::kStringVal)
      fail("attr " + name, fmt::format("must be string_val, found {}", value_case_name(*a)));
    for (std::size_t k = 0; k < N; ++k)
      if (a->string_val() == names[k]) return k;
    fail("attr " + name, fmt::format("'{}' is none of {}", a->string_val(), fmt::join(names, ", ")));
  }
  std::optional<bool> boolean(const std::string& name) const {
    const Attr* a = find(name);
    if (!a) return std::nullopt;
    if (a->value_case() != Attr::kBoolVal)
      fail("attr " + name, fmt::format("must be bool_val, found {}", value_case_name(*a)));
    return a->bool_val();
  }

 private:
  const pb::Node& node_;
  std::string at_;
  std::map<std::string, const Attr*> attrs_;
};

ComputeKind compute_kind_from_name(const std::string& name) {
  // Chakra has no phase field; Chakra's text converter names compute nodes
  // COMP_NODE_<layer>_{FWD,IG,WG}. Anything else counts as forward, optimizer steps aside.
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto ends = [&](const char* s) {
    return n.size() >= std::strlen(s) && n.compare(n.size() - std::strlen(s), std::string::npos, s) == 0;
  };
  if (ends("_ig")) return ComputeKind::kInputGradient;
  if (ends("_wg")) return ComputeKind::kWeightGradient;
  if (n.find("optimizer") != std::string::npos) return ComputeKind::kOptimizer;
  return ComputeKind::kForward;
}

// The network coordinates of an NPU (dimension 0 varies fastest, as in ASTRA-sim).
std::vector<int> coordinates(const net::Network& network, std::uint64_t npu) {
  std::vector<int> c;
  for (const auto& d : network.dims) {
    c.push_back(static_cast<int>(npu % static_cast<std::uint64_t>(d.size)));
    npu /= static_cast<std::uint64_t>(d.size);
  }
  return c;
}

// Iterations one trace may hold (chorus_iteration attributes), bounding the repeated DAG.
constexpr std::int64_t kMaxTraceIterations = 1000;

struct Imported {
  bool no_op = false;   // METADATA_NODE / INVALID_NODE: finish at once, dependents inherit deps
  std::string skipped;  // why a node became a no-op under skip_unsupported (for the notes)
  Node node;
  std::vector<std::size_t> deps;  // indices into the trace's node list
};

Imported map_node(const pb::Node& m, const NodeReader& r, const net::Network& network, int rank,
                  bool skip_unsupported) {
  Imported out;
  Node& n = out.node;
  n.name = m.name().empty() ? fmt::format("node {}", m.id()) : m.name();
  const double us = static_cast<double>(m.duration_micros());
  switch (m.type()) {
    case pb::INVALID_NODE:
    case pb::METADATA_NODE:
      out.no_op = true;
      break;
    case pb::COMP_NODE: {
      n.kind = NodeKind::kCompute;
      n.compute = compute_kind_from_name(n.name);
      (void)r.boolean("is_cpu_op");  // checked for its type; one compute stream either way
      const auto ops = r.integer("num_ops");
      const auto tensor = r.integer("tensor_size");
      if (m.duration_micros() > 0) {
        n.duration_ns = us * 1000;
      } else if (ops) {
        n.flops = static_cast<double>(r.non_negative("num_ops", *ops));
        n.mem_bytes = tensor ? static_cast<double>(r.non_negative("tensor_size", *tensor)) : 0.0;
      } else {
        n.duration_ns = 0;
      }
      break;
    }
    case pb::MEM_LOAD_NODE:
    case pb::MEM_STORE_NODE: {
      // ASTRA-sim sends these to its remote (disaggregated) memory model; chorus has none and
      // charges them to the accelerator's memory bandwidth instead (or their duration).
      n.kind = NodeKind::kCompute;
      n.compute = ComputeKind::kForward;
      if (m.duration_micros() > 0) {
        n.duration_ns = us * 1000;
      } else {
        n.mem_bytes = static_cast<double>(r.non_negative("tensor_size", r.required("tensor_size")));
      }
      break;
    }
    case pb::COMM_COLL_NODE: {
      if (r.boolean("is_cpu_op").value_or(false) && !r.find("comm_type")) {
        // The PyTorch converter also records the host-side call of a collective (c10d::...,
        // on the CPU thread, no comm_type); the transfer is the separate GPU kernel node. The
        // call costs its duration on the compute stream.
        n.kind = NodeKind::kCompute;
        n.compute = ComputeKind::kForward;
        n.duration_ns = us * 1000;
        break;
      }
      n.kind = NodeKind::kComm;
      n.comm = CommKind::kCollective;
      const auto type = r.required("comm_type");
      switch (type) {
        case pb::ALL_REDUCE:
          n.op = CollectiveKind::kAllReduce;
          break;
        case pb::ALL_GATHER:
          n.op = CollectiveKind::kAllGather;
          break;
        case pb::REDUCE_SCATTER:
          n.op = CollectiveKind::kReduceScatter;
          break;
        case pb::ALL_TO_ALL:
          n.op = CollectiveKind::kAllToAll;
          break;
        default: {
          const std::string name = pb::CollectiveCommType_IsValid(static_cast<int>(type))
                                       ? pb::CollectiveCommType_Name(static_cast<pb::CollectiveCommType>(type))
                                       : "unknown";
          if (skip_unsupported) {
            out.no_op = true;
            out.skipped = name;
            return out;
          }
          r.fail("attr comm_type", fmt::format("{} ({}) is not supported; chorus simulates ALL_REDUCE, ALL_GATHER, "
                                               "REDUCE_SCATTER and ALL_TO_ALL (--chakra-skip-unsupported: "
                                               "treat such nodes as finishing at once)",
                                               type, name));
        }
      }
      n.group = n.op == CollectiveKind::kAllToAll ? CommGroup::kModelParallel : CommGroup::kDataParallel;
      const double size = static_cast<double>(r.non_negative("comm_size", r.required("comm_size")));
      if (const Attr* a = r.find("involved_dim")) {
        if (a->value_case() != Attr::kBoolList)
          r.fail("attr involved_dim", fmt::format("must be bool_list, found {}", value_case_name(*a)));
        const auto& v = a->bool_list().values();
        // Entry k is dimension k. Entries past the network's dimensions are ignored, as
        // ASTRA-sim does (its default is five `true`s whatever the network); dimensions past
        // the list's end are not involved (PyTorch-converted traces carry one entry).
        for (int d = 0; d < std::min(network.num_dims(), v.size()); ++d)
          if (v[d]) n.dims.push_back(d);
        if (n.dims.empty())
          r.fail("attr involved_dim", fmt::format("selects no dimension of the network ({} entries, {} dimensions)",
                                                  v.size(), network.num_dims()));
      } else {
        for (int d = 0; d < network.num_dims(); ++d) n.dims.push_back(d);
      }
      double group = 1;
      for (int d : n.dims) group *= network.dims[static_cast<size_t>(d)].size;
      // comm_size is what each NPU holds when the collective starts (ASTRA-sim's
      // convention; its all-gather grows from there); chorus sizes an all-gather by its result.
      n.bytes = n.op == CollectiveKind::kAllGather ? size * group : size;
      break;
    }
    case pb::COMM_SEND_NODE:
    case pb::COMM_RECV_NODE: {
      n.kind = NodeKind::kComm;
      n.comm = CommKind::kPointToPoint;
      n.group = CommGroup::kModelParallel;
      const bool send = m.type() == pb::COMM_SEND_NODE;
      const char* self_field = send ? "comm_src" : "comm_dst";
      const char* peer_field = send ? "comm_dst" : "comm_src";
      if (auto self = r.integer(self_field); self && *self != rank)
        r.fail(std::string("attr ") + self_field, fmt::format("is {} but this is rank {}'s trace", *self, rank));
      const auto peer = r.required(peer_field);
      const auto npus = static_cast<std::int64_t>(network.num_npus());
      if (peer < 0 || peer >= npus || peer == rank)
        r.fail(std::string("attr ") + peer_field,
               fmt::format("peer {} must be another NPU of the network (0..{}, not {})", peer, npus - 1, rank));
      const auto a = coordinates(network, static_cast<std::uint64_t>(rank));
      const auto b = coordinates(network, static_cast<std::uint64_t>(peer));
      std::vector<int> differ;
      for (int d = 0; d < network.num_dims(); ++d)
        if (a[static_cast<size_t>(d)] != b[static_cast<size_t>(d)]) differ.push_back(d);
      if (differ.size() != 1)
        r.fail(std::string("attr ") + peer_field,
               fmt::format("ranks {} and {} differ in dimensions {}; a chorus point-to-point node uses one dimension",
                           rank, peer, fmt::join(differ, ", ")));
      n.dims = differ;
      n.bytes = static_cast<double>(r.non_negative("comm_size", r.required("comm_size")));
      break;
    }
    default:
      r.fail("type", fmt::format("unknown node type {}", static_cast<int>(m.type())));
  }
  // chorus's own attributes (chakra_export.h): what Chakra has no field for.
  static const std::string_view kKinds[] = {to_string(ComputeKind::kForward), to_string(ComputeKind::kInputGradient),
                                            to_string(ComputeKind::kWeightGradient),
                                            to_string(ComputeKind::kOptimizer)};
  static const std::string_view kGroups[] = {to_string(CommGroup::kDataParallel), to_string(CommGroup::kModelParallel),
                                             to_string(CommGroup::kPipeline)};
  if (n.kind == NodeKind::kCompute) {
    if (auto k = r.one_of(kChakraComputeKindAttr, kKinds)) n.compute = static_cast<ComputeKind>(*k);
  } else if (auto g = r.one_of(kChakraCommGroupAttr, kGroups)) {
    n.group = static_cast<CommGroup>(*g);
  }
  const std::string layer_field = std::string("attr ") + kChakraLayerAttr;
  const std::string iteration_field = std::string("attr ") + kChakraIterationAttr;
  if (auto layer = r.integer(kChakraLayerAttr)) {
    if (*layer < 0 || *layer > std::numeric_limits<int>::max())
      r.fail(layer_field, fmt::format("{} is out of range", *layer));
    n.layer = static_cast<int>(*layer);
  }
  if (auto iteration = r.integer(kChakraIterationAttr)) {
    if (*iteration < 0 || *iteration >= kMaxTraceIterations)
      r.fail(iteration_field, fmt::format("{} is not in 0..{}", *iteration, kMaxTraceIterations - 1));
    n.iteration = static_cast<int>(*iteration);
  }
  return out;
}

}  // namespace

std::string chakra_trace_file(const std::string& path, int rank) {
  if (path.size() > 3 && path.compare(path.size() - 3, 3, ".et") == 0) return path;
  const std::string candidate = fmt::format("{}.{}.et", path, rank < 0 ? 0 : rank);
  std::error_code ec;
  return std::filesystem::is_regular_file(candidate, ec) ? candidate : std::string();
}

Dag import_chakra(const chakra_et::EtTrace& trace, const net::Network& network, const ChakraOptions& options,
                  std::string* notes) {
  const std::string& src = trace.source;
  int rank = options.rank;
  const int named = rank_in_name(src);
  if (rank >= 0 && named >= 0 && rank != named)
    throw InputError(src, fmt::format("the file name says rank {} but rank {} was asked for", named, rank));
  if (rank < 0) rank = named >= 0 ? named : 0;
  if (static_cast<std::uint64_t>(rank) >= network.num_npus())
    throw InputError(src, fmt::format("rank {} is not an NPU of the {}-NPU network", rank, network.num_npus()));
  if (options.iterations < 1) throw InputError(src, fmt::format("iterations must be >= 1, got {}", options.iterations));
  if (trace.nodes.empty()) throw InputError(src, "the trace has no nodes");

  const std::size_t count = trace.nodes.size();
  auto at = [&](std::size_t i) {
    return fmt::format("{}: node id {} (byte {})", src, trace.nodes[i].node.id(), trace.nodes[i].offset);
  };
  std::map<std::uint64_t, std::size_t> index_of;
  for (std::size_t i = 0; i < count; ++i) {
    const auto [it, fresh] = index_of.emplace(trace.nodes[i].node.id(), i);
    if (!fresh)
      throw InputError(at(i),
                       fmt::format("field id: duplicate node id (first at byte {})", trace.nodes[it->second].offset));
  }
  std::vector<Imported> imported;
  imported.reserve(count);
  std::size_t ignored_ctrl = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const auto& m = trace.nodes[i].node;
    NodeReader r(m, at(i));
    imported.push_back(map_node(m, r, network, rank, options.skip_unsupported));
    auto& deps = imported.back().deps;
    auto add = [&](const google::protobuf::RepeatedField<std::uint64_t>& ids, const char* field) {
      for (std::uint64_t id : ids) {
        auto it = index_of.find(id);
        if (it == index_of.end()) r.fail(field, fmt::format("unknown node id {}", id));
        if (it->second == i) r.fail(field, "the node depends on itself");
        deps.push_back(it->second);
      }
    };
    add(m.data_deps(), "data_deps");
    // Chakra's feeder, which ASTRA-sim 2.x runs, follows data_deps only: the PyTorch converter
    // writes the host call tree's parent operator as ctrl_deps (absent ids, a node naming
    // itself, a CPU op naming its own GPU kernel), which are not "finish before" relations.
    if (options.ctrl_deps)
      add(m.ctrl_deps(), "ctrl_deps");
    else
      ignored_ctrl += static_cast<std::size_t>(m.ctrl_deps_size());
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  }

  // Topological order, file order among ready nodes (Kahn with a min-heap), so a trace already
  // in dependency order keeps its order.
  std::vector<std::vector<std::size_t>> children(count);
  std::vector<std::size_t> waiting(count);
  for (std::size_t i = 0; i < count; ++i) {
    waiting[i] = imported[i].deps.size();
    for (auto d : imported[i].deps) children[d].push_back(i);
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < count; ++i)
    if (waiting[i] == 0) ready.push(i);
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    const auto i = ready.top();
    ready.pop();
    order.push_back(i);
    for (auto c : children[i])
      if (--waiting[c] == 0) ready.push(c);
  }
  if (order.size() != count) {
    // Walk unfinished dependencies from an unfinished node until one repeats: a cycle.
    std::size_t v = 0;
    while (waiting[v] == 0) ++v;
    std::vector<std::size_t> path;
    std::vector<int> seen(count, -1);
    while (seen[v] < 0) {
      seen[v] = static_cast<int>(path.size());
      path.push_back(v);
      for (auto d : imported[v].deps)
        if (waiting[d] > 0) {
          v = d;
          break;
        }
    }
    std::vector<std::uint64_t> ids;
    for (auto k = static_cast<std::size_t>(seen[v]); k < path.size(); ++k)
      ids.push_back(trace.nodes[path[k]].node.id());
    std::reverse(ids.begin(), ids.end());
    throw InputError(at(v), fmt::format("dependency cycle through node ids {}", fmt::join(ids, " -> ")));
  }

  // One iteration: no-op nodes dropped, their dependents inherit their dependencies.
  std::vector<std::vector<int>> effective(count);  // DAG indices a trace node stands for
  std::vector<Node> one;
  for (auto i : order) {
    std::vector<int> deps;
    for (auto d : imported[i].deps) deps.insert(deps.end(), effective[d].begin(), effective[d].end());
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    if (imported[i].no_op) {
      effective[i] = std::move(deps);
      continue;
    }
    imported[i].node.deps = std::move(deps);
    effective[i] = {static_cast<int>(one.size())};
    one.push_back(std::move(imported[i].node));
  }
  if (one.empty())
    throw InputError(src, "the trace has no node chorus can simulate (only metadata, invalid or skipped nodes)");
  if (notes) {
    std::map<std::string, int> skipped;
    for (const auto& im : imported)
      if (!im.skipped.empty()) ++skipped[im.skipped];
    std::vector<std::string> parts;
    for (const auto& [name, k] : skipped) parts.push_back(fmt::format("{} {} node(s) skipped", k, name));
    if (ignored_ctrl > 0)
      parts.push_back(fmt::format("{} ctrl_deps not followed, as in Chakra's feeder (--chakra-ctrl-deps follows them)",
                                  ignored_ctrl));
    *notes = fmt::format("{}", fmt::join(parts, "; "));
  }

  Dag dag;
  auto stem = std::filesystem::path(src).filename().string();
  if (named >= 0)
    stem = stem.substr(0, stem.size() - 3 - std::to_string(named).size() - 1);
  else if (stem.size() > 3 && stem.ends_with(".et"))
    stem.resize(stem.size() - 3);
  dag.name = stem;
  // A trace chorus exported holds chorus_iteration attributes: it may be several iterations.
  repeat_window(dag, one, options.iterations);
  validate(dag, network.num_dims(), src);
  return dag;
}

Dag load_chakra(const std::string& path_or_prefix, const net::Network& network, const ChakraOptions& options) {
  const auto file = chakra_trace_file(path_or_prefix, options.rank);
  if (file.empty())
    throw InputError(path_or_prefix, fmt::format("not a Chakra trace: no file '{}.{}.et'", path_or_prefix,
                                                 options.rank < 0 ? 0 : options.rank));
  return import_chakra(chakra_et::read_et_file(file), network, options, nullptr);
}

}  // namespace chorus::workload
