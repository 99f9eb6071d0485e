#include "diagnose/flight_dump.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "core/text_file.h"

namespace chorus::diagnose {

namespace {

// An object of the dump and its path in it ("communicators[0].entries[2]"): every error names
// the file and the whole field.
struct Node {
  const nlohmann::json& j;
  const std::string& file;
  std::string path;

  std::string field(const std::string& key) const { return path.empty() ? key : path + "." + key; }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(file, fmt::format("field '{}': {}", field(key), what));
  }
  const nlohmann::json& at(const std::string& key) const {
    if (!j.contains(key)) fail(key, "missing");
    return j.at(key);
  }
  std::int64_t integer(const std::string& key, std::int64_t lo = std::numeric_limits<std::int64_t>::min()) const {
    const auto& v = at(key);
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX))
      fail(key, fmt::format("expected an integer, got {}", v.dump()));
    const auto x = v.get<std::int64_t>();
    if (x < lo) fail(key, fmt::format("expected at least {}, got {}", lo, x));
    return x;
  }
  int small(const std::string& key, int lo) const {
    const std::int64_t x = integer(key, lo);
    if (x > std::numeric_limits<int>::max()) fail(key, fmt::format("{} is out of range", x));
    return static_cast<int>(x);
  }
  std::string text(const std::string& key) const {
    const auto& v = at(key);
    if (!v.is_string()) fail(key, fmt::format("expected a string, got {}", v.dump()));
    return v.get<std::string>();
  }
  std::string one_of(const std::string& key, std::initializer_list<const char*> allowed) const {
    std::string s = text(key);
    for (const char* a : allowed)
      if (s == a) return s;
    std::string list;
    for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    fail(key, fmt::format("'{}' is none of {}", s, list));
  }
  bool boolean(const std::string& key) const {
    const auto& v = at(key);
    if (!v.is_boolean()) fail(key, fmt::format("expected true or false, got {}", v.dump()));
    return v.get<bool>();
  }
  const nlohmann::json& array(const std::string& key) const {
    const auto& v = at(key);
    if (!v.is_array()) fail(key, fmt::format("expected an array, got {}", v.type_name()));
    return v;
  }
  Node child(const nlohmann::json& c, const std::string& key) const {
    if (!c.is_object()) fail(key, fmt::format("expected an object, got {}", c.type_name()));
    return Node{c, file, field(key)};
  }
};

constexpr std::initializer_list<const char*> kOps = {"barrier",           "broadcast",   "reduce",      "all_reduce",
                                                     "reduce_scatter",    "all_gather",  "gather",      "scatter",
                                                     "all_to_all_single", "all_to_all",  "all_gatherv", "gatherv",
                                                     "scatterv",          "all_to_allv", "send",        "recv"};

FlightEntry parse_entry(const Node& e) {
  FlightEntry x;
  const auto& seq = e.at("seq");
  if (!seq.is_null()) x.seq = e.integer("seq", 0);
  x.op = e.one_of("op", kOps);
  const bool p2p = x.op == "send" || x.op == "recv";
  if (p2p != !x.seq.has_value())
    e.fail("seq", p2p ? "must be null for send and recv" : "must be a sequence number for a collective");
  x.algorithm = e.text("algorithm");
  x.dtype = e.text("dtype");
  x.count = e.integer("count", 0);
  x.bytes = e.integer("bytes", 0);
  x.root = e.small("root", -1);
  x.peer = e.small("peer", -1);
  x.async = e.boolean("async");
  x.layer = e.text("layer");
  x.state = e.one_of("state", {"started", "completed", "failed"});
  x.started_ns = e.integer("started_ns", 0);
  // (absent from the records of runtimes that did not count steps yet: step 0)
  if (e.j.contains("step")) x.step = e.integer("step", 0);
  return x;
}

FlightCommunicator parse_communicator(const Node& c) {
  FlightCommunicator x;
  x.name = c.text("name");
  x.backend = c.text("backend");
  for (std::size_t i = 0; i < c.array("ranks").size(); ++i) {
    const auto& r = c.j.at("ranks")[i];
    if (!r.is_number_integer() || r.get<std::int64_t>() < 0 || r.get<std::int64_t>() > 1 << 24)
      c.fail(fmt::format("ranks[{}]", i), fmt::format("expected a world rank, got {}", r.dump()));
    x.ranks.push_back(r.get<int>());
  }
  x.rank = c.small("rank", 0);
  x.size = c.small("size", 1);
  if (static_cast<std::size_t>(x.size) != x.ranks.size())
    c.fail("size", fmt::format("{} but 'ranks' lists {} members", x.size, x.ranks.size()));
  if (x.rank >= x.size) c.fail("rank", fmt::format("{} is not below size {}", x.rank, x.size));
  x.collectives = c.integer("collectives", 0);
  x.operations = c.integer("operations", 0);
  x.capacity = c.integer("capacity", 0);
  x.dropped = c.integer("dropped", 0);
  const auto& entries = c.array("entries");
  for (std::size_t i = 0; i < entries.size(); ++i)
    x.entries.push_back(parse_entry(c.child(entries[i], fmt::format("entries[{}]", i))));
  for (const auto& e : x.entries)
    if (e.seq && *e.seq >= x.collectives)
      c.fail("collectives", fmt::format("{} but an entry has seq {}", x.collectives, *e.seq));
  return x;
}

}  // namespace

const FlightEntry* FlightCommunicator::in_flight() const {
  for (auto it = entries.rbegin(); it != entries.rend(); ++it)
    if (it->state == "started") return &*it;
  return nullptr;
}

const FlightEntry* FlightCommunicator::find_seq(std::int64_t seq) const {
  for (const auto& e : entries)
    if (e.seq && *e.seq == seq) return &e;
  return nullptr;
}

const FlightCommunicator* FlightDump::find(const std::string& name) const {
  for (const auto& c : communicators)
    if (c.name == name) return &c;
  return nullptr;
}

FlightDump parse_flight_dump(const nlohmann::json& j, const std::string& file) {
  if (!j.is_object()) throw InputError(file, fmt::format("expected a JSON object, got {}", j.type_name()));
  const Node d{j, file, ""};
  if (d.text("format") != kFlightFormat)
    d.fail("format", fmt::format("'{}' is not '{}'", d.text("format"), kFlightFormat));
  if (d.integer("version") != kFlightVersion)
    d.fail("version", fmt::format("{} is not a version this chorus reads ({})", d.integer("version"), kFlightVersion));
  FlightDump x;
  x.file = file;
  x.job = d.text("job");
  x.rank = d.small("rank", 0);
  x.world_size = d.small("world_size", 1);
  if (x.world_size > kMaxWorldSize)
    d.fail("world_size", fmt::format("{} is more than {}", x.world_size, kMaxWorldSize));
  if (x.rank >= x.world_size) d.fail("rank", fmt::format("{} is not below world_size {}", x.rank, x.world_size));
  x.pid = d.integer("pid", 0);
  x.host = d.text("host");
  // Why it dumped: timeout, comm_error, disagreement, abort, signal, request, python, finalize
  // (the runtime may add reasons: any string is taken, only the failures' details are shown).
  x.reason = d.text("reason");
  x.detail = d.text("detail");
  x.dumped_ns = d.integer("dumped_ns", 0);
  x.wall_offset_ns = d.integer("wall_offset_ns");
  const Node where = d.child(d.at("where"), "where");
  x.place = where.one_of("place", {"starting", "running", "in_finalize", "finalized"});
  x.place_since_ns = where.integer("since_ns", 0);
  if (d.j.contains("steps_marked")) x.steps_marked = d.integer("steps_marked", 0);
  if (d.j.contains("clock_to_rank0_ns") != d.j.contains("clock_error_ns"))
    d.fail(d.j.contains("clock_to_rank0_ns") ? "clock_error_ns" : "clock_to_rank0_ns",
           "is missing: a clock offset comes with its error bound");
  if (d.j.contains("clock_to_rank0_ns")) {
    x.clock_to_rank0_ns = d.integer("clock_to_rank0_ns");
    x.clock_error_ns = d.integer("clock_error_ns", 0);
  }
  const auto& comms = d.array("communicators");
  for (std::size_t i = 0; i < comms.size(); ++i) {
    x.communicators.push_back(parse_communicator(d.child(comms[i], fmt::format("communicators[{}]", i))));
    const auto& c = x.communicators.back();
    const std::string at = fmt::format("communicators[{}]", i);
    if (c.ranks[c.rank] != x.rank) d.fail(at + ".ranks", fmt::format("does not hold rank {} at 'rank'", x.rank));
    for (int r : c.ranks)
      if (r >= x.world_size) d.fail(at + ".ranks", fmt::format("rank {} is not below world_size {}", r, x.world_size));
    for (std::size_t k = 0; k + 1 < x.communicators.size(); ++k)
      if (x.communicators[k].name == c.name) d.fail(at + ".name", fmt::format("'{}' is named twice", c.name));
  }
  return x;
}

FlightDump parse_flight_dump_text(const std::string& text, const std::string& file) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(file, fmt::format("not JSON: {}", e.what()));
  }
  return parse_flight_dump(j, file);
}

FlightDump read_flight_dump(const std::string& path) {
  return parse_flight_dump_text(read_text_file(path, "the flight record"), path);
}

}  // namespace chorus::diagnose
