#include "sched/schedule_json.h"

#include <algorithm>
#include <cstdint>
#include <fmt/format.h>
#include <set>

#include "core/error.h"
#include "core/json_fields.h"
#include "core/text_file.h"
#include "sched/baseline.h"

namespace chorus::sched {
namespace {

using nlohmann::json;

bool parse_phase(const std::string& s, coll::Phase& phase) {
  for (auto p : {coll::Phase::kReduceScatter, coll::Phase::kAllGather, coll::Phase::kAllToAll}) {
    if (s == coll::to_string(p)) {
      phase = p;
      return true;
    }
  }
  return false;
}

// Phases an operation's chunks go through, in order.
std::vector<coll::Phase> phases_of(CollectiveKind op) {
  switch (op) {
    case CollectiveKind::kAllReduce:
      return {coll::Phase::kReduceScatter, coll::Phase::kAllGather};
    case CollectiveKind::kReduceScatter:
      return {coll::Phase::kReduceScatter};
    case CollectiveKind::kAllGather:
      return {coll::Phase::kAllGather};
    case CollectiveKind::kAllToAll:
      return {coll::Phase::kAllToAll};
    default:  // not a Themis collective (coll::kThemisCollectives)
      break;
  }
  return {};
}

const char* order_key(coll::Phase phase) {
  switch (phase) {
    case coll::Phase::kReduceScatter:
      return "rs_order";
    case coll::Phase::kAllGather:
      return "ag_order";
    case coll::Phase::kAllToAll:
      return "a2a_order";
    case coll::Phase::kPointToPoint:
      break;  // a DAG's transfer, never in a schedule file
  }
  return "";
}

using json_fields::get;

}  // namespace

json chunks_to_json(const Schedule& s) {
  json chunks = json::array();
  for (size_t c = 0; c < s.chunks.size(); ++c) {
    json cj{{"chunk", c}};
    for (auto phase : phases_of(s.op)) cj[order_key(phase)] = s.chunks[c].order(phase);
    chunks.push_back(cj);
  }
  return chunks;
}

json dim_order_to_json(const Schedule& s) {
  json order = json::array();
  for (const auto& ops : s.dim_order) {
    json dj = json::array();
    for (const auto& op : ops) dj.push_back({{"chunk", op.chunk}, {"phase", std::string(coll::to_string(op.phase))}});
    order.push_back(dj);
  }
  return order;
}

double schedule_stages(CollectiveKind op, double num_chunks, std::size_t num_dims) {
  return num_chunks * static_cast<double>(phases_of(op).size() * num_dims);
}

double schedule_json_bytes(double stages) { return 900.0 * stages; }

json to_json(const Schedule& s) {
  return json{{"format", "chorus-schedule"},
              {"version", 1},
              {"op", std::string(compact_name(s.op))},
              {"size_bytes", s.size_bytes},
              {"num_chunks", s.num_chunks},
              {"scheduler", s.scheduler},
              {"policy", std::string(to_string(s.policy))},
              {"chunks", chunks_to_json(s)},
              {"dim_order", dim_order_to_json(s)}};
}

Schedule schedule_from_json(const json& j, const net::Network& network, const std::string& source) {
  if (!j.is_object()) throw InputError(source, "a schedule must be a JSON object");
  static const std::set<std::string> allowed = {"format",    "version", "op",     "size_bytes", "num_chunks",
                                                "scheduler", "policy",  "chunks", "dim_order"};
  for (const auto& [key, value] : j.items())
    if (!allowed.count(key)) throw InputError(source, fmt::format("unknown key '{}'", key));
  if (get<std::string>(j, "format", source) != "chorus-schedule")
    throw InputError(source, "field 'format' must be \"chorus-schedule\"");
  if (get<int>(j, "version", source) != 1) throw InputError(source, "field 'version': only version 1 is known");
  Schedule s;
  const auto op = get<std::string>(j, "op", source);
  if (!coll::parse_collective_op(op, s.op))
    throw InputError(source, fmt::format("field 'op': unknown operation '{}'", op));
  s.size_bytes = get<double>(j, "size_bytes", source);
  if (!(s.size_bytes > 0)) throw InputError(source, "field 'size_bytes' must be positive");
  s.num_chunks = get<int>(j, "num_chunks", source);
  if (s.num_chunks < 1) throw InputError(source, "field 'num_chunks' must be >= 1");
  s.scheduler = get<std::string>(j, "scheduler", source);
  // The ideal is a bound, not a schedule: a file claiming it would be simulated as chunks
  // and its time reported under the bound's name.
  if (s.scheduler == "ideal")
    throw InputError(source, "field 'scheduler': 'ideal' is a bound, not a chunk schedule; it cannot be loaded");
  const auto policy = get<std::string>(j, "policy", source);
  if (policy == "fifo")
    s.policy = IntraDimPolicy::kFifo;
  else if (policy == "scf")
    s.policy = IntraDimPolicy::kSmallestChunkFirst;
  else if (policy == "lifo")
    s.policy = IntraDimPolicy::kLifo;
  else
    throw InputError(source, fmt::format("field 'policy': '{}' is not fifo, scf or lifo", policy));

  const auto chunks = get<json>(j, "chunks", source);
  if (!chunks.is_array() || chunks.size() != static_cast<size_t>(s.num_chunks))
    throw InputError(source, fmt::format("field 'chunks' must list num_chunks = {} chunks", s.num_chunks));
  const int d = network.num_dims();
  for (size_t c = 0; c < chunks.size(); ++c) {
    const std::string where = fmt::format("{}: chunks[{}]", source, c);
    std::vector<std::vector<int>> orders;
    for (auto phase : phases_of(s.op)) {
      auto order = get<std::vector<int>>(chunks[c], order_key(phase), where);
      auto sorted = order;
      std::sort(sorted.begin(), sorted.end());
      for (int k = 0; k < d; ++k)
        if (sorted.size() != static_cast<size_t>(d) || sorted[static_cast<size_t>(k)] != k)
          throw InputError(where, fmt::format("field '{}' must visit each of the network's {} dimensions "
                                              "(0..{}) exactly once",
                                              order_key(phase), d, d - 1));
      orders.push_back(order);
    }
    const bool ag_only = s.op == CollectiveKind::kAllGather;
    s.chunks.push_back(
        ChunkSchedule{chunk_stages(s.op, ag_only ? std::vector<int>{} : orders[0],
                                   ag_only ? orders[0] : (orders.size() > 1 ? orders[1] : std::vector<int>{}))});
  }
  if (j.contains("dim_order") && !j.at("dim_order").empty()) {
    const auto& order = j.at("dim_order");
    if (!order.is_array() || order.size() != static_cast<size_t>(d))
      throw InputError(source, fmt::format("field 'dim_order' must have one list per dimension ({})", d));
    const size_t ops_per_dim = static_cast<size_t>(s.num_chunks) * phases_of(s.op).size();
    for (size_t k = 0; k < order.size(); ++k) {
      const std::string where = fmt::format("{}: dim_order[{}]", source, k);
      std::vector<DimOp> ops;
      std::set<std::pair<int, int>> seen;
      for (const auto& e : order[k]) {
        DimOp dop{get<int>(e, "chunk", where), coll::Phase::kReduceScatter};
        if (!parse_phase(get<std::string>(e, "phase", where), dop.phase))
          throw InputError(where, "field 'phase' must be RS, AG or A2A");
        if (dop.chunk < 0 || dop.chunk >= s.num_chunks || !seen.insert({dop.chunk, static_cast<int>(dop.phase)}).second)
          throw InputError(
              where, fmt::format("chunk {} {} is out of range or listed twice", dop.chunk, coll::to_string(dop.phase)));
        ops.push_back(dop);
      }
      if (ops.size() != ops_per_dim)
        throw InputError(where, fmt::format("lists {} chunk operations, expected {}", ops.size(), ops_per_dim));
      s.dim_order.push_back(std::move(ops));
    }
  }
  return s;
}

Schedule parse_schedule_json(const std::string& text, const net::Network& network, const std::string& source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers too big
    throw InputError(source, fmt::format("invalid JSON: {}", e.what()));
  }
  return schedule_from_json(j, network, source);
}

Schedule load_schedule_file(const std::string& path, const net::Network& network) {
  return parse_schedule_json(read_text_file(path, "the schedule file"), network, path);
}

}  // namespace chorus::sched
