#include "sim/astra_system.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/suggest.h"
#include "core/text_file.h"

namespace chorus::sim {
namespace {

using nlohmann::json;

// Every key ASTRA-sim 2.x's system layer reads, and boost-mode (its example files carry it; the
// system layer reads no such key).
const std::vector<std::string>& known_keys() {
  static const std::vector<std::string> keys = {"scheduling-policy",
                                                "active-chunks-per-dimension",
                                                "preferred-dataset-splits",
                                                "all-reduce-implementation",
                                                "reduce-scatter-implementation",
                                                "all-gather-implementation",
                                                "all-to-all-implementation",
                                                "all-reduce-implementation-custom",
                                                "reduce-scatter-implementation-custom",
                                                "all-gather-implementation-custom",
                                                "all-to-all-implementation-custom",
                                                "collective-optimization",
                                                "local-reduction-delay",
                                                "endpoint-delay",
                                                "local-mem-bw",
                                                "peak-perf",
                                                "roofline-enabled",
                                                "model-shared-bus",
                                                "L",
                                                "o",
                                                "g",
                                                "G",
                                                "trace-enabled",
                                                "replay-only",
                                                "track-local-mem",
                                                "local-mem-trace-filename",
                                                "boost-mode"};
  return keys;
}

struct Reader {
  const json& j;
  const std::string& source;

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(source, fmt::format("field '{}': {}", key, what));
  }
  double number(const std::string& key, double min) const {
    const auto& v = j.at(key);
    if (!v.is_number()) fail(key, fmt::format("must be a number, got {} ({})", v.dump(), v.type_name()));
    const double x = v.get<double>();
    if (!(x >= min) || x > 1e15) fail(key, fmt::format("must be in {:g}..1e15, got {}", min, v.dump()));
    return x;
  }
  int integer(const std::string& key, int min) const {
    const auto& v = j.at(key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < min || v.get<std::int64_t>() > 1'000'000)
      fail(key, fmt::format("must be an integer in {}..1000000, got {}", min, v.dump()));
    return static_cast<int>(v.get<std::int64_t>());
  }
  std::string text(const std::string& key) const {
    const auto& v = j.at(key);
    if (!v.is_string()) fail(key, fmt::format("must be a string, got {} ({})", v.dump(), v.type_name()));
    return v.get<std::string>();
  }
  // A 0/1 switch: 0 (or absent) is the only value with no effect; anything else is refused.
  void must_be_off(const std::string& key, const std::string& why) const {
    if (!j.contains(key)) return;
    const double x = number(key, 0);
    if (x != 0)
      fail(key, fmt::format("{} is not modelled by chorus ({}); set it to 0 or remove it", j.at(key).dump(), why));
  }
  std::vector<net::Algorithm> algorithms(const std::string& key) const {
    std::vector<net::Algorithm> out;
    if (!j.contains(key)) return out;
    const auto& v = j.at(key);
    if (!v.is_array() || v.empty())
      fail(key, fmt::format("must be a non-empty list of names, one per dimension, got {}", v.dump()));
    for (std::size_t d = 0; d < v.size(); ++d) {
      if (!v[d].is_string()) fail(key, fmt::format("dimension {}: must be a string, got {}", d, v[d].dump()));
      const auto name = v[d].get<std::string>();
      net::Algorithm a{};
      if (name.rfind("one", 0) == 0)
        fail(key, fmt::format("dimension {}: '{}' (ASTRA-sim's one-dimensional variant for a communicator group) is "
                              "not supported; use ring, direct, halvingDoubling or doubleBinaryTree",
                              d, name));
      if (name.rfind("direct", 0) == 0 && name != "direct")
        fail(key, fmt::format("dimension {}: '{}': a windowed direct is not supported; use direct (all peers at once)",
                              d, name));
      if (!net::parse_algorithm(name, a) || name.find('_') != std::string::npos)
        fail(key, fmt::format("dimension {}: unknown implementation '{}'{}; use ring, direct, halvingDoubling or "
                              "doubleBinaryTree",
                              d, name, did_you_mean(name, {"ring", "direct", "halvingDoubling", "doubleBinaryTree"})));
      out.push_back(a);
    }
    return out;
  }
};

}  // namespace

AstraSystem parse_astra_system(const std::string& text, const std::string& source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(source, fmt::format("invalid JSON: {}", e.what()));
  }
  if (!j.is_object()) throw InputError(source, "expected a JSON object (ASTRA-sim's system configuration)");
  for (const auto& [key, value] : j.items()) {
    (void)value;
    if (std::ranges::find(known_keys(), key) == known_keys().end())
      throw InputError(source, fmt::format("unknown key '{}'{} (not a field of ASTRA-sim's system file)", key,
                                           did_you_mean(key, known_keys())));
  }
  const Reader r{j, source};
  AstraSystem s;
  s.source = source;
  if (j.contains("scheduling-policy")) {
    const auto p = r.text("scheduling-policy");
    if (p == "FIFO")
      s.policy = sched::IntraDimPolicy::kFifo;
    else if (p == "LIFO")
      s.policy = sched::IntraDimPolicy::kLifo;
    else if (p == "EXPLICIT")
      r.fail("scheduling-policy", "EXPLICIT (the workload's own priorities) is not supported; use FIFO or LIFO");
    else
      r.fail("scheduling-policy",
             fmt::format("unknown policy '{}'{}; use FIFO or LIFO", p, did_you_mean(p, {"FIFO", "LIFO"})));
  }
  if (j.contains("active-chunks-per-dimension"))
    s.active_chunks_per_dimension = r.integer("active-chunks-per-dimension", 1);
  if (j.contains("preferred-dataset-splits")) s.preferred_dataset_splits = r.integer("preferred-dataset-splits", 1);
  s.all_reduce = r.algorithms("all-reduce-implementation");
  s.reduce_scatter = r.algorithms("reduce-scatter-implementation");
  s.all_gather = r.algorithms("all-gather-implementation");
  s.all_to_all = r.algorithms("all-to-all-implementation");
  for (const auto* key : {"all-reduce-implementation-custom", "reduce-scatter-implementation-custom",
                          "all-gather-implementation-custom", "all-to-all-implementation-custom"})
    if (j.contains(key))
      r.fail(key,
             "custom collectives (a Chakra trace per collective) are not supported; give the "
             "*-implementation of each dimension instead");
  if (j.contains("collective-optimization")) {
    const auto o = r.text("collective-optimization");
    if (o == "localBWAware")
      s.local_bw_aware = true;
    else if (o != "baseline")
      r.fail("collective-optimization", fmt::format("unknown value '{}'{}; use baseline or localBWAware", o,
                                                    did_you_mean(o, {"baseline", "localBWAware"})));
  }
  if (j.contains("endpoint-delay")) s.endpoint_delay_ns = r.number("endpoint-delay", 0);
  if (j.contains("local-mem-bw")) {
    s.local_mem_GBps = r.number("local-mem-bw", 0);
    if (!(s.local_mem_GBps > 0)) r.fail("local-mem-bw", "must be positive (GB/s)");
  }
  r.must_be_off("model-shared-bus", "the LogGP shared bus between the NPU and its memory");
  if (j.contains("peak-perf")) s.peak_tflops = r.number("peak-perf", 0);
  if (j.contains("roofline-enabled")) {
    const double on = r.number("roofline-enabled", 0);
    if (on != 0 && on != 1)
      r.fail("roofline-enabled", fmt::format("must be 0 or 1, got {}", j.at("roofline-enabled").dump()));
    s.roofline = on == 1;
    if (s.roofline && !(s.peak_tflops > 0))
      r.fail("peak-perf", "roofline-enabled 1 needs a positive peak-perf (TFLOP/s)");
    if (s.roofline && !(s.local_mem_GBps > 0))
      r.fail("local-mem-bw", "roofline-enabled 1 needs a positive local-mem-bw (GB/s)");
  }
  r.must_be_off("replay-only", "chorus simulates every collective");
  for (const auto* key : {"local-reduction-delay", "L", "o", "g", "G"})
    if (j.contains(key)) (void)r.number(key, 0);
  for (const auto* key : {"trace-enabled", "track-local-mem", "boost-mode"})
    if (j.contains(key)) (void)r.number(key, 0);
  if (j.contains("local-mem-trace-filename")) (void)r.text("local-mem-trace-filename");
  return s;
}

AstraSystem load_astra_system(const std::string& path) {
  return parse_astra_system(read_text_file(path, "system file"), path);
}

net::Network apply_astra_system(const net::Network& network, const AstraSystem& system) {
  const auto fail = [&](const std::string& key, std::size_t d, const std::string& what) {
    throw InputError(system.source, fmt::format("field '{}': dimension {}: {}", key, d, what));
  };
  const std::size_t dims = network.dims.size();
  const std::vector<std::pair<std::string, const std::vector<net::Algorithm>*>> lists = {
      {"all-reduce-implementation", &system.all_reduce},
      {"reduce-scatter-implementation", &system.reduce_scatter},
      {"all-gather-implementation", &system.all_gather},
      {"all-to-all-implementation", &system.all_to_all}};
  for (const auto& [key, list] : lists)
    if (!list->empty() && list->size() != dims)
      throw InputError(system.source, fmt::format("field '{}' names {} dimension(s) but the network {} has {} ({})",
                                                  key, list->size(), network.name, dims, network.shape()));
  if (!system.local_bw_aware && dims > 1)
    throw InputError(system.source,
                     "field 'collective-optimization': baseline (a whole all-reduce on every dimension in turn) is "
                     "not supported on a network of more than one dimension; use localBWAware (reduce-scatter up "
                     "the dimensions, all-gather down)");
  net::Network out = network;
  for (std::size_t d = 0; d < dims; ++d) {
    auto& dim = out.dims[d];
    const bool power_of_two = (dim.size & (dim.size - 1)) == 0;
    // Reduce-scatter and all-gather stages run one algorithm per dimension in chorus: all-reduce's,
    // else reduce-scatter's or all-gather's, which must then agree.
    net::Algorithm chosen = net::Algorithm::kTable1;
    std::string chosen_by;
    for (const auto& [key, list] : lists) {
      if (list->empty() || key == "all-to-all-implementation") continue;
      const auto a = (*list)[d];
      if (a == net::Algorithm::kDoubleBinaryTree && key != "all-reduce-implementation")
        fail(key, d, "doubleBinaryTree runs all-reduces only; use ring, direct or halvingDoubling");
      if (chosen == net::Algorithm::kTable1) {
        chosen = a;
        chosen_by = key;
      } else if (a != chosen && chosen != net::Algorithm::kDoubleBinaryTree) {
        fail(key, d,
             fmt::format("'{}' differs from {}'s '{}': chorus runs one algorithm per dimension for the "
                         "reduce-scatter and all-gather stages; give the same",
                         net::to_string(a), chosen_by, net::to_string(chosen)));
      }
    }
    if (chosen == net::Algorithm::kHalvingDoubling && !power_of_two)
      fail(chosen_by, d,
           fmt::format("halvingDoubling needs a power-of-two size, the dimension has {} NPUs; use "
                       "ring or direct",
                       dim.size));
    if (chosen == net::Algorithm::kDoubleBinaryTree && d + 1 != dims)
      fail(chosen_by, d,
           "doubleBinaryTree runs a whole all-reduce: only on the last dimension (localBWAware "
           "reduce-scatters the others)");
    if (chosen != net::Algorithm::kTable1) dim.algorithm = chosen;
    if (!system.all_to_all.empty()) {
      const auto a = system.all_to_all[d];
      if (a == net::Algorithm::kHalvingDoubling || a == net::Algorithm::kDoubleBinaryTree)
        fail("all-to-all-implementation", d,
             fmt::format("{} has no all-to-all; use ring or direct",
                         a == net::Algorithm::kHalvingDoubling ? "halvingDoubling" : "doubleBinaryTree"));
      dim.all_to_all_algorithm = a;
    }
    dim.endpoint_delay_ns = system.endpoint_delay_ns;
    dim.reduce_memory_GBps = system.local_mem_GBps;
  }
  net::validate(out, system.source);
  return out;
}

int astra_transfers_per_dim(const net::Network& network, const AstraSystem& system) {
  const bool astra = std::ranges::all_of(network.dims, [](const net::Dimension& d) { return d.per_message_bandwidth; });
  return astra ? system.active_chunks_per_dimension : 1;
}

sched::SchedulerSpec astra_scheduler(const AstraSystem& system) {
  return system.policy == sched::IntraDimPolicy::kLifo ? sched::parse_scheduler("baseline-lifo")
                                                       : sched::parse_scheduler("baseline");
}

}  // namespace chorus::sim
