#include "sim/jobs/job_spec.h"

#include <cmath>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "core/suggest.h"
#include "core/text_file.h"
#include "core/yaml_fields.h"
#include "sim/stragglers.h"
#include "workload/parallelism.h"

namespace chorus::sim::jobs {

using yaml_fields::check_keys;
using yaml_fields::require;
using yaml_fields::scalar;

std::string_view to_string(PlacementPolicy policy) {
  switch (policy) {
    case PlacementPolicy::kExplicit:
      return "explicit";
    case PlacementPolicy::kContiguous:
      return "contiguous";
    case PlacementPolicy::kRandom:
      return "random";
    case PlacementPolicy::kTopologyAware:
      return "topology-aware";
  }
  return "?";
}

namespace {

constexpr int kMaxJobIterations = workload::kMaxTrainingIterations;
constexpr int kMaxJobNpus = 1 << 20;

// A path relative to the jobs file's directory when such a file exists, or a Chakra prefix there
// (`<path>.0.et` exists); zoo names stay as they are.
std::string resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || std::filesystem::path(path).is_absolute()) return path;
  const auto candidate = std::filesystem::path(base_dir) / path;
  return std::filesystem::exists(candidate) || std::filesystem::exists(candidate.string() + ".0.et")
             ? candidate.string()
             : path;
}

double finite_at_least(const yaml_fields::Source& src, const YAML::Node& node, const std::string& field, double low,
                       const char* expected) {
  const double x = scalar<double>(src, node, field, expected);
  if (!std::isfinite(x) || x < low)
    throw InputError(src.at(node), fmt::format("field '{}' must be a finite number >= {}, got {}", field, low,
                                               node.as<std::string>()));
  return x;
}

JobSpec parse_job(const yaml_fields::Source& src, const YAML::Node& j, std::size_t i, const std::string& base_dir) {
  const auto f = [i](const char* key) { return fmt::format("jobs[{}].{}", i, key); };
  JobSpec job;
  job.at = src.at(j);
  check_keys(
      src, j,
      {"name", "workload", "network", "ns_per_cycle", "npus", "placement", "seed", "start_ms", "iterations", "speeds"},
      "");
  job.workload =
      resolve(scalar<std::string>(src, require(src, j, "workload", ""), f("workload"), "a zoo name or a workload file"),
              base_dir);
  if (j["network"]) {
    job.network =
        resolve(scalar<std::string>(src, j["network"], f("network"), "a network file or preset name"), base_dir);
    job.network_at = src.at(j["network"]);
  }
  if (j["ns_per_cycle"]) {
    job.ns_per_cycle = scalar<double>(src, j["ns_per_cycle"], f("ns_per_cycle"), "a number (ns)");
    if (!(job.ns_per_cycle > 0) || !std::isfinite(job.ns_per_cycle))
      throw InputError(src.at(j["ns_per_cycle"]), fmt::format("field '{}' must be a finite number > 0, got {}",
                                                              f("ns_per_cycle"), j["ns_per_cycle"].as<std::string>()));
  }
  if (j["iterations"]) {
    job.iterations = scalar<int>(src, j["iterations"], f("iterations"), "an integer");
    if (job.iterations < 1 || job.iterations > kMaxJobIterations)
      throw InputError(src.at(j["iterations"]), fmt::format("field '{}' must be in 1..{}, got {}", f("iterations"),
                                                            kMaxJobIterations, job.iterations));
  }
  if (j["start_ms"]) job.start_ns = 1e6 * finite_at_least(src, j["start_ms"], f("start_ms"), 0.0, "a number (ms)");
  if (j["npus"]) {
    job.npus = scalar<int>(src, j["npus"], f("npus"), "an integer");
    if (job.npus < 1 || job.npus > kMaxJobNpus)
      throw InputError(src.at(j["npus"]),
                       fmt::format("field '{}' must be in 1..{}, got {}", f("npus"), kMaxJobNpus, job.npus));
  }
  job.placement_at = src.at(j["npus"] ? j["npus"] : j);
  if (const YAML::Node p = j["placement"]) {
    job.placement_at = src.at(p);
    if (p.IsSequence()) {
      job.policy = PlacementPolicy::kExplicit;
      for (std::size_t k = 0; k < p.size(); ++k)
        job.servers.push_back(
            scalar<int>(src, p[k], fmt::format("{}[{}]", f("placement"), k), "an integer (a server)"));
      if (job.servers.empty()) throw InputError(src.at(p), fmt::format("field '{}' lists no server", f("placement")));
      if (j["npus"] && job.npus != static_cast<int>(job.servers.size()))
        throw InputError(src.at(j["npus"]), fmt::format("field '{}' is {} but the placement lists {} servers",
                                                        f("npus"), job.npus, job.servers.size()));
      job.npus = static_cast<int>(job.servers.size());
    } else {
      const auto policy = scalar<std::string>(src, p, f("placement"), "a policy or a list of servers");
      const std::vector<std::string> names{"contiguous", "random", "topology-aware"};
      if (policy == "contiguous")
        job.policy = PlacementPolicy::kContiguous;
      else if (policy == "random")
        job.policy = PlacementPolicy::kRandom;
      else if (policy == "topology-aware")
        job.policy = PlacementPolicy::kTopologyAware;
      else
        throw InputError(src.at(p),
                         fmt::format("field '{}': unknown policy '{}'{}; policies: contiguous, random, topology-aware, "
                                     "or a list of servers",
                                     f("placement"), policy, did_you_mean(policy, names)));
    }
  }
  if (job.npus == 0)
    throw InputError(job.at, fmt::format("missing field 'npus' (or a list of servers as 'placement')"));
  if (j["seed"]) {
    if (job.policy != PlacementPolicy::kRandom)
      throw InputError(src.at(j["seed"]), fmt::format("field '{}' applies to the random placement only", f("seed")));
    const auto seed = scalar<long long>(src, j["seed"], f("seed"), "an integer");
    if (seed < 0) throw InputError(src.at(j["seed"]), fmt::format("field '{}' must be >= 0, got {}", f("seed"), seed));
    job.seed = static_cast<std::uint64_t>(seed);
  }
  if (const YAML::Node s = j["speeds"]; s && s.IsMap()) {
    // Drawn: each NPU's speed uniform in [min, max] (chorus::Rng with the seed), in NPU order.
    const auto field = [&](const char* key) { return fmt::format("{}.{}", f("speeds"), key); };
    check_keys(src, s, {"min", "max", "seed"}, f("speeds") + ": ");
    const double lo = scalar<double>(src, require(src, s, "min", f("speeds") + ": "), field("min"), "a number");
    const double hi = s["max"] ? scalar<double>(src, s["max"], field("max"), "a number") : 1.0;
    if (!(lo > 0) || !std::isfinite(hi) || hi < lo)
      throw InputError(src.at(s),
                       fmt::format("field '{}' must have 0 < min <= max, got min {} max {}", f("speeds"), lo, hi));
    const auto seed = s["seed"] ? scalar<long long>(src, s["seed"], field("seed"), "an integer") : 1;
    if (seed < 0)
      throw InputError(src.at(s["seed"]), fmt::format("field '{}' must be >= 0, got {}", field("seed"), seed));
    job.speeds = draw_speeds(static_cast<std::uint64_t>(job.npus), lo, hi, static_cast<std::uint64_t>(seed));
  } else if (s) {
    if (!s.IsSequence())
      throw InputError(src.at(s),
                       fmt::format("field '{}' must be a list (one speed per NPU) or {{min, max, seed}}", f("speeds")));
    if (s.size() != static_cast<std::size_t>(job.npus))
      throw InputError(src.at(s),
                       fmt::format("field '{}' lists {} speeds for {} NPUs", f("speeds"), s.size(), job.npus));
    for (std::size_t k = 0; k < s.size(); ++k) {
      const auto field = fmt::format("{}[{}]", f("speeds"), k);
      const double x = scalar<double>(src, s[k], field, "a number");
      if (!(x > 0) || !std::isfinite(x))
        throw InputError(src.at(s[k]),
                         fmt::format("field '{}' must be a finite number > 0, got {}", field, s[k].as<std::string>()));
      job.speeds.push_back(x);
    }
  }
  return job;
}

// links[i]: {from, to, bandwidth_fraction} or {from, to, down: true}; at_ms and until_ms (parsed by
// the caller) make it a fault during the run.
net::LinkFault parse_link_fault(const yaml_fields::Source& src, const YAML::Node& l, std::size_t i) {
  const auto field = fmt::format("links[{}]", i);
  if (!l.IsMap())
    throw InputError(src.at(l), fmt::format("field '{}' must be a map {{from, to, bandwidth_fraction | down}}", field));
  check_keys(src, l, {"from", "to", "bandwidth_fraction", "down", "at_ms", "until_ms"}, field + ": ");
  net::LinkFault fault;
  fault.where = fmt::format("{}: {}", src.at(l), field);
  fault.from = scalar<int>(src, require(src, l, "from", field + ": "), field + ".from", "an integer (a node)");
  fault.to = scalar<int>(src, require(src, l, "to", field + ": "), field + ".to", "an integer (a node)");
  if (l["bandwidth_fraction"].IsDefined() == l["down"].IsDefined())
    throw InputError(src.at(l), fmt::format("field '{}' needs one of 'bandwidth_fraction' and 'down'", field));
  if (l["down"]) {
    if (!scalar<bool>(src, l["down"], field + ".down", "true or false"))
      throw InputError(src.at(l["down"]), fmt::format("field '{}.down': false is no fault; leave the link out", field));
    fault.bandwidth_fraction = 0;
  } else {
    fault.bandwidth_fraction = scalar<double>(src, l["bandwidth_fraction"], field + ".bandwidth_fraction", "a number");
    if (!(fault.bandwidth_fraction > 0 && fault.bandwidth_fraction <= 1))
      throw InputError(src.at(l["bandwidth_fraction"]),
                       fmt::format("field '{}.bandwidth_fraction' must be in (0, 1] (a link down: "
                                   "'down: true'), got {}",
                                   field, fault.bandwidth_fraction));
  }
  return fault;
}

}  // namespace

JobsFile parse_jobs_yaml(const std::string& text, const std::string& source, const std::string& base_dir) {
  const yaml_fields::Source src{source};
  const YAML::Node doc = yaml_fields::load(text, source);
  if (!doc.IsMap()) throw InputError(src.at(doc), "expected a map with the keys 'fabric' and 'jobs'");
  JobsFile file;
  file.source = source;
  try {
    check_keys(src, doc, {"fabric", "jobs", "links"}, "");
    if (const YAML::Node links = doc["links"]) {
      if (!links.IsSequence())
        throw InputError(src.at(links), "field 'links' must be a list of degraded or failed links");
      for (std::size_t i = 0; i < links.size(); ++i) {
        auto fault = parse_link_fault(src, links[i], i);
        const auto field = fmt::format("links[{}]", i);
        if (links[i]["until_ms"] && !links[i]["at_ms"])
          throw InputError(src.at(links[i]["until_ms"]),
                           fmt::format("field '{}.until_ms' needs 'at_ms' (when the fault begins)", field));
        if (!links[i]["at_ms"]) {
          file.link_faults.push_back(std::move(fault));
          continue;
        }
        TimedLinkFault timed;
        timed.at_ns = 1e6 * finite_at_least(src, links[i]["at_ms"], field + ".at_ms", 0.0, "a number (ms)");
        if (links[i]["until_ms"]) {
          timed.until_ns = 1e6 * finite_at_least(src, links[i]["until_ms"], field + ".until_ms", 0.0, "a number (ms)");
          if (!(timed.until_ns > timed.at_ns))
            throw InputError(src.at(links[i]["until_ms"]),
                             fmt::format("field '{}.until_ms' ({}) must be after '{}.at_ms' ({})", field,
                                         timed.until_ns / 1e6, field, timed.at_ns / 1e6));
        } else if (fault.bandwidth_fraction == 0) {
          throw InputError(src.at(links[i]),
                           fmt::format("field '{}': a link down from 'at_ms' needs 'until_ms' (its flows wait for "
                                       "it); down for the whole run: leave 'at_ms' out",
                                       field));
        }
        timed.fault = std::move(fault);
        file.timed_link_faults.push_back(std::move(timed));
      }
    }
    if (doc["fabric"])
      file.fabric = resolve(scalar<std::string>(src, doc["fabric"], "fabric", "a fabric file"), base_dir);
    const YAML::Node jobs = require(src, doc, "jobs", "");
    if (!jobs.IsSequence() || jobs.size() == 0) throw InputError(src.at(jobs), "field 'jobs' must be a non-empty list");
    std::set<std::string> names;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const YAML::Node j = jobs[i];
      if (!j.IsMap()) throw InputError(src.at(j), fmt::format("field 'jobs[{}]' must be a map", i));
      std::string name = j["name"] ? scalar<std::string>(src, j["name"], fmt::format("jobs[{}].name", i), "a string")
                                   : fmt::format("job{}", i);
      try {
        auto job = parse_job(src, j, i, base_dir);
        job.name = name;
        if (!names.insert(name).second) throw InputError(src.at(j["name"]), "another job has this name");
        file.jobs.push_back(std::move(job));
      } catch (const InputError& e) {
        throw InputError(e.where(), fmt::format("job '{}': {}", name, e.detail()));
      }
    }
  } catch (const YAML::Exception& e) {
    throw yaml_fields::structure_error(e, source);
  }
  return file;
}

JobsFile load_jobs_yaml(const std::string& path) {
  return parse_jobs_yaml(read_text_file(path, "jobs file"), path, std::filesystem::path(path).parent_path().string());
}

}  // namespace chorus::sim::jobs
