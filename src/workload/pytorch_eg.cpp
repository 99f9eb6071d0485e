#include "workload/pytorch_eg.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/text_file.h"
#include "workload/torch_profiler_trace.h"

namespace chorus::workload {
namespace {

using nlohmann::json;

// One tensor as the observer records it: [tensor id, storage id, offset, numel, element
// bytes, device].
struct Tensor {
  std::int64_t storage = 0;
  double bytes = 0;
};

class GraphNode {
 public:
  GraphNode(const json& j, const std::string& source) : j_(j) {
    if (!j.is_object()) throw InputError(source, "field nodes: every node must be an object");
    at_ = fmt::format("{}: node id {}", source, j.contains("id") ? j["id"].dump() : "?");
    id = integer("id");
    parent = integer("parent");
    tid = integer("tid");
    name = text("name");
  }
  std::int64_t id = 0, parent = 0, tid = 0;
  std::string name;
  const std::string& at() const { return at_; }
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(at_, fmt::format("field {}: {}", field, what));
  }
  const json& field(const char* key) const {
    if (!j_.contains(key)) fail(key, "missing");
    return j_[key];
  }
  std::int64_t integer(const char* key) const {
    const auto& v = field(key);
    if (!v.is_number_integer()) fail(key, fmt::format("must be an integer, got {}", v.dump()));
    return v.get<std::int64_t>();
  }
  std::optional<std::int64_t> optional_integer(const char* key) const {
    if (!j_.contains(key)) return std::nullopt;
    return integer(key);
  }
  std::string text(const char* key) const {
    const auto& v = field(key);
    if (!v.is_string()) fail(key, fmt::format("must be a string, got {}", v.dump()));
    return v.get<std::string>();
  }
  // The tensors of `inputs` or `outputs` (lists of tensors flattened), by their `*_types`.
  std::vector<Tensor> tensors(const char* key) const {
    const std::string types_key = std::string(key == std::string("inputs") ? "input" : "output") + "_types";
    const auto& values = field(key);
    const auto& types = field(types_key.c_str());
    if (!values.is_array() || !types.is_array() || values.size() != types.size())
      fail(key, fmt::format("must be a list as long as {}", types_key));
    std::vector<Tensor> out;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!types[i].is_string()) fail(types_key, fmt::format("entry {} must be a string", i));
      const auto type = types[i].get<std::string>();
      if (type.rfind("Tensor", 0) == 0) {
        out.push_back(tensor(values[i], fmt::format("{}[{}]", key, i)));
      } else if (type.rfind("GenericList[Tensor", 0) == 0) {
        if (!values[i].is_array()) fail(fmt::format("{}[{}]", key, i), "a tensor list must be a list");
        for (std::size_t k = 0; k < values[i].size(); ++k)
          out.push_back(tensor(values[i][k], fmt::format("{}[{}][{}]", key, i, k)));
      }
    }
    return out;
  }
  // Shape `k` of `input_shapes` / `output_shapes` as integers.
  std::vector<double> shape(const char* key, std::size_t k) const {
    const auto& shapes = field(key);
    if (!shapes.is_array() || k >= shapes.size() || !shapes[k].is_array())
      fail(key, fmt::format("entry {} must be a list of dimensions", k));
    std::vector<double> out;
    for (const auto& d : shapes[k]) {
      if (!d.is_number_integer() || d.get<std::int64_t>() < 0)
        fail(key, fmt::format("entry {} holds {}, not a dimension", k, d.dump()));
      out.push_back(static_cast<double>(d.get<std::int64_t>()));
    }
    return out;
  }

 private:
  Tensor tensor(const json& v, const std::string& field_name) const {
    if (!v.is_array() || v.size() < 5)
      fail(field_name,
           fmt::format("a tensor is [id, storage, offset, numel, element bytes, device], got {}", v.dump()));
    for (std::size_t k = 0; k < 5; ++k)
      if (!v[k].is_number_integer() || v[k].get<std::int64_t>() < 0)
        fail(field_name, fmt::format("entry {} of the tensor must be an integer >= 0, got {}", k, v[k].dump()));
    return Tensor{v[1].get<std::int64_t>(),
                  static_cast<double>(v[3].get<std::int64_t>()) * static_cast<double>(v[4].get<std::int64_t>())};
  }
  const json& j_;
  std::string at_;
};

double product(const std::vector<double>& v) {
  double p = 1;
  for (double x : v) p *= x;
  return p;
}

// FLOPs of a matmul or convolution operator (2 per multiply-add), or nothing for other ops.
std::optional<double> family_flops(const GraphNode& n) {
  const auto& op = n.name;
  auto matmul = [&](std::size_t a, std::size_t b) {  // [.., n, k] x [.., k, m]
    const auto x = n.shape("input_shapes", a), y = n.shape("input_shapes", b);
    if (x.size() < 2 || y.size() < 2 || x.back() != y[y.size() - 2])
      n.fail("input_shapes", fmt::format("{} needs [.., n, k] x [.., k, m] operands", op));
    return 2 * product(x) * y.back();
  };
  if (op == "aten::mm" || op == "aten::bmm") return matmul(0, 1);
  if (op == "aten::addmm" || op == "aten::baddbmm" || op == "aten::addbmm") return matmul(1, 2);
  if (op == "aten::convolution" || op == "aten::_convolution" || op == "aten::conv1d" || op == "aten::conv2d" ||
      op == "aten::conv3d") {
    // output elements x (input channels / groups x kernel) multiply-adds: weight [O, C/g, k...]
    const auto w = n.shape("input_shapes", 1), y = n.shape("output_shapes", 0);
    if (w.size() < 2 || w[0] == 0)
      n.fail("input_shapes", fmt::format("{} needs a weight [out, in / groups, kernel...]", op));
    return 2 * product(y) * product(w) / w[0];
  }
  return std::nullopt;
}

// A backend's record of a collective: "<backend>:<operation>".
std::optional<CollectiveKind> collective(const std::string& name, bool& is_collective) {
  // chorus: torch.distributed's chorus backend (its works' profiling titles, chorus capture).
  is_collective = is_backend_record(name);
  if (!is_collective) return std::nullopt;
  const auto colon = name.find(':');
  const auto op = name.substr(colon + 1);
  if (op == "all_reduce" || op == "allreduce") return CollectiveKind::kAllReduce;
  if (op == "all_gather" || op == "allgather" || op == "_allgather_base" || op == "all_gather_into_tensor")
    return CollectiveKind::kAllGather;
  if (op == "reduce_scatter" || op == "_reduce_scatter_base" || op == "reduce_scatter_tensor")
    return CollectiveKind::kReduceScatter;
  if (op == "all_to_all" || op == "alltoall" || op == "alltoall_base" || op == "all_to_all_single")
    return CollectiveKind::kAllToAll;
  return std::nullopt;
}

// A backend's record of a send or a recv: "<backend>:send" / "<backend>:recv".
std::optional<CollectiveKind> point_to_point_record(const std::string& name) {
  if (!is_backend_record(name)) return std::nullopt;
  const auto op = name.substr(name.find(':') + 1);
  if (op == "send") return CollectiveKind::kSend;
  if (op == "recv" || op == "recv_") return CollectiveKind::kRecv;
  return std::nullopt;
}

// The compute operators' durations from a torch profiler trace (`path`) of the graph `source`:
// matched by the trace's "Record function id" and the name when its events carry one (Kineto),
// else by name and order (the k-th operator of a name in the graph is the k-th top-level event of
// that name in the trace; a name whose counts differ keeps the roofline). An operator's duration
// is its event's minus the time inside c10d:: calls (the issue of a collective, which the network
// model simulates) and minus its waits for the collectives it issued and that completed inside it
// (wait_inside_us: the thread idle while they were in flight). Returns the note of how many matched.
std::string apply_profiler_trace(std::vector<Node>& window, const std::vector<std::size_t>& ops,
                                 const std::vector<GraphNode>& nodes, const json& root, const std::string& source,
                                 const std::string& path, const ExecutionGraphOptions& options) {
  auto trace = read_profiler_trace(read_text_file(path, "the profiler trace"), path);
  const std::size_t steps =
      options.median_of_steps
          ? median_over_steps(trace, "Optimizer.step", static_cast<std::size_t>(std::max(0, options.graph_steps)))
          : 0;
  // Kineto's events carry the OS pid, as the graph does: a trace of another process is an error.
  if (root.contains("pid") && root["pid"].is_number_integer()) {
    const auto graph_pid = root["pid"].get<std::int64_t>();
    std::set<std::int64_t> pids;
    bool all = true;
    for (const auto& e : trace.top_level) {
      if (e.pid) pids.insert(*e.pid);
      all = all && e.pid.has_value();
    }
    if (all && !pids.count(graph_pid))
      throw InputError(path, fmt::format("field pid: the trace's events are of process(es) {}, but {} was recorded by "
                                         "process {} (a trace of another rank or run?)",
                                         fmt::join(pids, ", "), source, graph_pid));
  }
  std::vector<std::size_t> compute;  // window indices, in issue order
  for (std::size_t k = 0; k < window.size(); ++k)
    if (window[k].kind == NodeKind::kCompute) compute.push_back(k);
  std::vector<const ProfiledEvent*> match(window.size(), nullptr);
  const bool by_id = std::any_of(trace.top_level.begin(), trace.top_level.end(),
                                 [](const ProfiledEvent& e) { return e.record_function_id >= 0; });
  std::vector<std::string> differing;
  if (by_id) {
    std::map<std::int64_t, const ProfiledEvent*> by_rf;
    for (const auto& e : trace.top_level)
      if (e.record_function_id >= 0) by_rf.emplace(e.record_function_id, &e);
    for (auto k : compute) {
      const auto& g = nodes[ops[k]];
      const auto rf = g.optional_integer("rf_id");
      if (!rf) continue;
      if (auto it = by_rf.find(*rf); it != by_rf.end() && it->second->name == g.name) match[k] = it->second;
    }
  } else {
    std::map<std::string, std::vector<std::size_t>> graph_by_name;
    std::map<std::string, std::vector<const ProfiledEvent*>> trace_by_name;
    for (auto k : compute) graph_by_name[nodes[ops[k]].name].push_back(k);
    for (const auto& e : trace.top_level) trace_by_name[e.name].push_back(&e);
    for (const auto& [name, list] : graph_by_name) {
      const auto it = trace_by_name.find(name);
      const std::size_t events = it == trace_by_name.end() ? 0 : it->second.size();
      if (events != list.size()) {
        differing.push_back(fmt::format("'{}' {} in the graph, {} in the trace", name, list.size(), events));
        continue;
      }
      for (std::size_t m = 0; m < list.size(); ++m) match[list[m]] = it->second[m];
    }
  }
  std::size_t matched = 0;
  double gaps_us = 0, recording_us = 0, waits_inside_us = 0;
  for (auto k : compute) {
    if (!match[k]) continue;
    ++matched;
    double us = match[k]->dur_us - match[k]->collective_us - match[k]->wait_inside_us;
    waits_inside_us += match[k]->wait_inside_us;
    if (options.host_gaps) {
      us += match[k]->gap_after_us;
      gaps_us += match[k]->gap_after_us;
      const double cost = static_cast<double>(match[k]->events) * options.overhead_us_per_event;
      recording_us += std::min(cost, std::max(0.0, us));
      us -= cost;
    }
    window[k].duration_ns = std::max(0.0, us) * 1000;
  }
  const char* how = by_id ? "record function id and name" : "name and order";
  if (matched == 0)
    throw InputError(path, fmt::format("no top-level event matches a compute operator of {} by {} (a trace of another "
                                       "graph or window?)",
                                       source, how));
  std::string note = fmt::format("{}: {} of {} compute operators took their durations from the trace (by {})", path,
                                 matched, compute.size(), how);
  if (options.median_of_steps)
    note += steps ? fmt::format("; each operator's times from the median of the trace's {} steps{}", steps,
                                options.graph_steps > 0 && static_cast<std::size_t>(options.graph_steps) < steps
                                    ? fmt::format(" (its first {} kept, as many as the graph's)", options.graph_steps)
                                    : "")
                  : std::string("; the trace's steps differ (or have no optimizer step): its times as they are");
  if (waits_inside_us > 0)
    note += fmt::format("; the waits for collectives inside operators taken off ({:.3f} ms)", waits_inside_us / 1e3);
  if (options.host_gaps)
    note += fmt::format(
        "; the host's time between operators added ({:.3f} ms), the recording's cost taken off "
        "({:.3f} ms, {:.2f} us an event)",
        gaps_us / 1e3, recording_us / 1e3, options.overhead_us_per_event);
  if (matched < compute.size()) note += "; the others keep the roofline";
  if (!differing.empty()) {
    note += " (counts differ: ";
    for (std::size_t m = 0; m < differing.size() && m < 4; ++m) note += (m ? "; " : "") + differing[m];
    note += differing.size() > 4 ? fmt::format("; and {} more)", differing.size() - 4) : ")";
  }
  return note;
}

// A node's parent is the operator that called it, up to a thread's root node (its own parent,
// or a parent outside the graph): walking up from any node ends at a root. A file whose nodes
// are each other's parents (2 -> 3 -> 2) would make every walk of a subtree endless; it is
// refused, naming the node ids around the cycle.
void check_parents_form_a_tree(const std::vector<GraphNode>& nodes, const std::map<std::int64_t, std::size_t>& index_of,
                               const std::string& source) {
  enum : char { kUnseen, kOnPath, kDone };
  std::vector<char> state(nodes.size(), kUnseen);
  std::vector<std::size_t> path;
  for (std::size_t start = 0; start < nodes.size(); ++start) {
    path.clear();
    std::size_t k = start;
    for (;;) {
      if (state[k] == kDone) break;
      if (state[k] == kOnPath) {
        std::vector<std::int64_t> ids;
        for (auto p = std::find(path.begin(), path.end(), k); p != path.end(); ++p) ids.push_back(nodes[*p].id);
        ids.push_back(nodes[k].id);
        throw InputError(source, fmt::format("field parent: nodes {} are each other's parents (a cycle); a node's "
                                             "parents must lead up to a thread's root node",
                                             fmt::join(ids, " -> ")));
      }
      state[k] = kOnPath;
      path.push_back(k);
      if (nodes[k].parent == nodes[k].id) break;
      const auto up = index_of.find(nodes[k].parent);
      if (up == index_of.end()) break;
      k = up->second;
    }
    for (auto p : path) state[p] = kDone;
  }
}

// A collective record without tensors (the chorus backend's works carry only their name): the
// tensors of the c10d:: operator that issued it, when it is inside one (c10d::allreduce_), else it
// waits for its thread's previous operator (it was issued after it; torch 1.13's
// all_to_all_single has no c10d:: operator).
void no_tensors_record(const GraphNode& g, const std::vector<GraphNode>& nodes,
                       const std::map<std::int64_t, std::size_t>& index_of,
                       const std::map<std::int64_t, int>& last_compute, std::vector<Tensor>& inputs,
                       std::vector<Tensor>& reads, std::vector<int>& deps) {
  if (const auto p = index_of.find(g.parent); p != index_of.end() && is_c10d_call(nodes[p->second].name)) {
    inputs = nodes[p->second].tensors("inputs");
    reads = inputs;
  }
  if (auto it = last_compute.find(g.tid); reads.empty() && it != last_compute.end()) deps.push_back(it->second);
}

// A send's destination or a recv's source: the third argument of the c10d:: operator the record
// is inside (c10d::send(tensors, process_group, dstRank, tag)); -1 when it is not recorded.
int peer_argument(const GraphNode& g, const std::vector<GraphNode>& nodes,
                  const std::map<std::int64_t, std::size_t>& index_of) {
  const auto p = index_of.find(g.parent);
  if (p == index_of.end() || !is_c10d_call(nodes[p->second].name)) return -1;
  const auto& inputs = nodes[p->second].field("inputs");
  if (!inputs.is_array() || inputs.size() < 3 || !inputs[2].is_number_integer()) return -1;
  return static_cast<int>(inputs[2].get<std::int64_t>());
}

}  // namespace

std::map<int, std::vector<int>> parse_collective_dims(const std::string& text, const std::string& where) {
  std::map<int, std::vector<int>> out;
  auto number = [&](const std::string& s, const std::string& entry, int min) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (s.empty() || used != s.size() || v < min)
      throw InputError(where,
                       fmt::format("'{}': expected COLLECTIVE=DIM[,DIM...] (collective from 1, dimensions from 0), "
                                   "got '{}'",
                                   entry, s));
    return v;
  };
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find(';', start), text.size());
    const auto entry = text.substr(start, end - start);
    start = end + 1;
    if (entry.empty()) continue;
    const auto eq = entry.find('=');
    if (eq == std::string::npos) throw InputError(where, fmt::format("'{}': expected COLLECTIVE=DIM[,DIM...]", entry));
    const int k = number(entry.substr(0, eq), entry, 1);
    std::vector<int> dims;
    const auto list = entry.substr(eq + 1);
    std::size_t from = 0;
    while (from <= list.size()) {
      const auto comma = std::min(list.find(',', from), list.size());
      dims.push_back(number(list.substr(from, comma - from), entry, 0));
      from = comma + 1;
    }
    if (!out.emplace(k, std::move(dims)).second) throw InputError(where, fmt::format("collective {} given twice", k));
  }
  return out;
}

bool looks_like_execution_graph(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return false;
  return text.find("\"nodes\"") != std::string::npos && text.find("\"schema\"") != std::string::npos;
}

Dag import_execution_graph(const std::string& text, const std::string& source, const net::Network& network,
                           const ExecutionGraphOptions& options, std::string* notes) {
  if (options.iterations < 1)
    throw InputError(source, fmt::format("iterations must be >= 1, got {}", options.iterations));
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(source, fmt::format("not JSON (a truncated execution graph?): {}", e.what()));
  }
  if (!root.is_object() || !root.contains("nodes") || !root["nodes"].is_array())
    throw InputError(source, "field nodes: missing; an execution graph is an object with a 'nodes' list");
  std::vector<GraphNode> nodes;
  std::map<std::int64_t, std::size_t> index_of;
  for (const auto& j : root["nodes"]) {
    nodes.emplace_back(j, source);
    if (!index_of.emplace(nodes.back().id, nodes.size() - 1).second) nodes.back().fail("id", "duplicate node id");
  }
  check_parents_form_a_tree(nodes, index_of, source);
  // The operators: the children of a thread's root node (the observer's "[...|thread]").
  std::set<std::int64_t> thread_roots;
  for (const auto& n : nodes)
    if (n.name.find("execution_graph|thread]") != std::string::npos) thread_roots.insert(n.id);
  std::map<std::int64_t, std::vector<std::size_t>> children;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].parent != nodes[i].id) children[nodes[i].parent].push_back(i);
  std::vector<std::size_t> ops;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (thread_roots.count(nodes[i].parent) && !thread_roots.count(nodes[i].id)) ops.push_back(i);
  // A backend's collective record finishes on the backend's thread, and the observer files it under
  // whatever operator is open then (the same DDP step's all-reduce is an operator of its own in one
  // recording, inside AccumulateGrad's c10d::allreduce_ in another): a simulated collective inside
  // an operator, and not inside another collective record, is lifted out as a collective of its own.
  std::set<std::size_t> lifted;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    bool is_collective = false;
    const bool simulated = collective(nodes[i].name, is_collective).has_value() ||
                           (options.point_to_point && point_to_point_record(nodes[i].name));
    if (thread_roots.count(nodes[i].parent) || !simulated) continue;
    std::int64_t up = nodes[i].parent;
    for (std::size_t steps = 0; steps < nodes.size(); ++steps) {
      const auto it = index_of.find(up);
      if (it == index_of.end() || thread_roots.count(up)) break;
      bool inside_collective = false;
      collective(nodes[it->second].name, inside_collective);
      if (inside_collective || nodes[it->second].parent == up) break;
      if (thread_roots.count(nodes[it->second].parent)) {
        lifted.insert(i);
        break;
      }
      up = nodes[it->second].parent;
    }
  }
  ops.insert(ops.end(), lifted.begin(), lifted.end());
  std::sort(ops.begin(), ops.end(), [&](std::size_t a, std::size_t b) { return nodes[a].id < nodes[b].id; });
  if (ops.empty()) throw InputError(source, "the graph has no operator under a thread's root node");

  std::vector<int> all;
  for (int d = 0; d < network.num_dims(); ++d) all.push_back(d);
  for (const auto& [number, dims] : options.collective_dims) {
    std::set<int> seen;
    for (int d : dims)
      if (d < 0 || d >= network.num_dims() || !seen.insert(d).second)
        throw InputError(source, fmt::format("collective {} (collective_dims): dimensions must be distinct, in 0..{}, "
                                             "got {}",
                                             number, network.num_dims() - 1, fmt::join(dims, ",")));
    if (dims.empty()) throw InputError(source, fmt::format("collective {} (collective_dims): no dimension", number));
  }
  int collectives = 0, p2ps = 0;
  std::vector<int> skipped;  // collectives not simulated, with skip_unsimulated
  std::vector<Node> window;
  std::map<std::int64_t, int> last_writer;              // storage -> DAG node that last wrote it
  std::map<std::int64_t, int> last_compute;             // thread -> its last compute node (issue order)
  std::map<std::int64_t, std::vector<int>> unconsumed;  // thread -> collectives whose result is not recorded
  for (std::size_t i : ops) {
    const auto& g = nodes[i];
    Node n;
    n.name = fmt::format("{} #{}", g.name, g.id);
    // The operator and everything it called: their tensors are its data flow.
    std::vector<std::size_t> subtree = {i};
    for (std::size_t k = 0; k < subtree.size(); ++k)
      if (auto c = children.find(nodes[subtree[k]].id); c != children.end())
        for (auto child : c->second)
          if (!lifted.count(child)) subtree.push_back(child);
    auto inputs = g.tensors("inputs");
    const auto outputs = g.tensors("outputs");
    std::vector<Tensor> reads, writes;
    for (auto k : subtree) {
      const auto in = nodes[k].tensors("inputs"), out = nodes[k].tensors("outputs");
      reads.insert(reads.end(), in.begin(), in.end());
      writes.insert(writes.end(), out.begin(), out.end());
    }
    bool is_collective = false;
    const auto op = collective(g.name, is_collective);
    const auto p2p_record = options.point_to_point ? point_to_point_record(g.name) : std::nullopt;
    const bool p2p = p2p_record.has_value();
    const CollectiveKind p2p_op = p2p_record.value_or(CollectiveKind::kSend);
    if (is_collective && reads.empty()) no_tensors_record(g, nodes, index_of, last_compute, inputs, reads, n.deps);
    for (const auto& t : reads)
      if (auto it = last_writer.find(t.storage); it != last_writer.end()) n.deps.push_back(it->second);
    const int index = static_cast<int>(window.size());
    if (is_collective && !op && !p2p && options.skip_unsimulated) {  // a barrier, broadcast, ...: no time here
      is_collective = false;
      skipped.push_back(index);
    }
    if (p2p) {
      n.kind = NodeKind::kComm;
      n.comm = CommKind::kPointToPoint;
      n.op = p2p_op;
      n.group = CommGroup::kPipeline;
      n.peer = peer_argument(g, nodes, index_of);
      // Issued after its thread's previous operator (a blocking call; its buffer may be older).
      if (auto it = last_compute.find(g.tid); it != last_compute.end()) n.deps.push_back(it->second);
      const auto given = options.point_to_point_dims.find(++p2ps);
      n.dims = {given == options.point_to_point_dims.end() ? 0 : given->second};
      for (const auto& t : inputs) n.bytes += t.bytes;
      if (p2p_op == CollectiveKind::kRecv)
        for (const auto& t : inputs) last_writer[t.storage] = index;  // its readers wait for it
      unconsumed[g.tid].push_back(index);                             // it blocks its thread
    } else if (is_collective) {
      if (!op)
        g.fail("name", fmt::format("collective '{}' is not simulated; chorus simulates all_reduce, all_gather, "
                                   "reduce_scatter and all_to_all",
                                   g.name));
      n.kind = NodeKind::kComm;
      n.op = *op;
      // The graph does not record the process group's ranks: the whole network unless the user
      // says which dimensions the group spans.
      const auto given = options.collective_dims.find(++collectives);
      n.dims = given == options.collective_dims.end() ? all : given->second;
      n.group = n.op == CollectiveKind::kAllToAll ? CommGroup::kModelParallel : CommGroup::kDataParallel;
      for (const auto& t : inputs) n.bytes += t.bytes;
      double group = 1;
      for (int d : n.dims) group *= network.dims[static_cast<size_t>(d)].size;
      if (n.op == CollectiveKind::kAllGather) n.bytes *= group;  // chorus sizes an all-gather by its result
      if (n.op == CollectiveKind::kAllReduce) {
        for (const auto& t : inputs) last_writer[t.storage] = index;  // in place: readers of the tensor wait
      } else {
        unconsumed[g.tid].push_back(index);  // the result tensor is not recorded: the thread's next operator waits
      }
    } else {
      // Compute: the FLOPs and tensor bytes of the outermost matmul / convolution operators in
      // the subtree; an operator without any: its own tensors' bytes (memory-bound).
      n.kind = NodeKind::kCompute;
      // Kind from autograd's and the optimizer's names: back-propagation ("...Backward0"),
      // gradient accumulation into the weights, the optimizer step; anything else forward.
      n.compute = g.name.find("AccumulateGrad") != std::string::npos ? ComputeKind::kWeightGradient
                  : g.name.find("Backward") != std::string::npos     ? ComputeKind::kInputGradient
                  : g.name.rfind("Optimizer.", 0) == 0               ? ComputeKind::kOptimizer
                                                                     : ComputeKind::kForward;
      bool any = false;
      std::vector<std::size_t> stack = {i};
      while (!stack.empty()) {
        const auto k = stack.back();
        stack.pop_back();
        if (auto f = family_flops(nodes[k])) {
          any = true;
          n.flops += *f;
          for (const auto* key : {"inputs", "outputs"})
            for (const auto& t : nodes[k].tensors(key)) n.mem_bytes += t.bytes;
          continue;
        }
        if (auto c = children.find(nodes[k].id); c != children.end())
          for (auto child : c->second)
            if (!lifted.count(child)) stack.push_back(child);
      }
      if (!any)
        for (const auto* list : {static_cast<const std::vector<Tensor>*>(&inputs), &outputs})
          for (const auto& t : *list) n.mem_bytes += t.bytes;
      // A thread issues its operators in order (one stream).
      if (auto it = last_compute.find(g.tid); it != last_compute.end()) n.deps.push_back(it->second);
      auto& waiting = unconsumed[g.tid];
      n.deps.insert(n.deps.end(), waiting.begin(), waiting.end());
      waiting.clear();
      last_compute[g.tid] = index;
      for (const auto& t : writes) last_writer[t.storage] = index;
    }
    std::sort(n.deps.begin(), n.deps.end());
    n.deps.erase(std::unique(n.deps.begin(), n.deps.end()), n.deps.end());
    window.push_back(std::move(n));
  }
  if (!options.collective_dims.empty() && options.collective_dims.rbegin()->first > collectives)
    throw InputError(source, fmt::format("collective {} (collective_dims): the graph has {} collective(s)",
                                         options.collective_dims.rbegin()->first, collectives));
  if (!options.profiler_trace.empty()) {
    auto note = apply_profiler_trace(window, ops, nodes, root, source, options.profiler_trace, options);
    if (notes) *notes = std::move(note);
  }
  for (int k : skipped) window[static_cast<std::size_t>(k)].duration_ns = 0;
  if (notes && !skipped.empty())
    *notes += fmt::format("{}{} collective(s) chorus does not simulate (barrier, broadcast, ...) take no time",
                          notes->empty() ? "" : "; ", skipped.size());
  Dag dag;
  auto stem = std::filesystem::path(source).filename().string();
  if (stem.size() > 5 && stem.ends_with(".json")) stem.resize(stem.size() - 5);
  dag.name = stem;
  repeat_window(dag, window, options.iterations);
  validate(dag, network.num_dims(), source);
  return dag;
}

}  // namespace chorus::workload
