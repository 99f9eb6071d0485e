#include "eval/real/themis_real_study.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "core/error.h"
#include "core/text_file.h"
#include "launch/launcher.h"
#include "eval/real/self_job.h"

namespace chorus::eval {

using launch::usable_cpus;

namespace {

// Table 2-like networks scaled to one 2-core host: few ranks, and bandwidths (Gb/s per rank)
// low enough that pacing, not the host's real transfers, sets every stage's time.
const std::vector<ThemisRealNetwork>& study_networks() {
  static const std::vector<ThemisRealNetwork> nets = {
      {"2D-SW_SW_homo-2x2", 4,
       "name: 2D-SW_SW_homo-2x2\n"
       "dims:\n"
       "  - {kind: Switch, size: 2, link_bandwidth_gbps: 0.25, links_per_npu: 1, latency_ns: 20000}\n"
       "  - {kind: Switch, size: 2, link_bandwidth_gbps: 0.25, links_per_npu: 1, latency_ns: 20000}\n"},
      {"3D-SW_SW_SW_homo-2x2x2", 8,
       "name: 3D-SW_SW_SW_homo-2x2x2\n"
       "dims:\n"
       "  - {kind: Switch, size: 2, link_bandwidth_gbps: 0.25, links_per_npu: 1, latency_ns: 20000}\n"
       "  - {kind: Switch, size: 2, link_bandwidth_gbps: 0.25, links_per_npu: 1, latency_ns: 20000}\n"
       "  - {kind: Switch, size: 2, link_bandwidth_gbps: 0.25, links_per_npu: 1, latency_ns: 20000}\n"},
      {"2D-FC_SW_hetero-4x2", 8,
       "name: 2D-FC_SW_hetero-4x2\n"
       "dims:\n"
       "  - {kind: FullyConnected, size: 4, link_bandwidth_gbps: 0.125, links_per_npu: 3, latency_ns: 10000}\n"
       "  - {kind: Switch, size: 2, link_bandwidth_gbps: 0.1875, links_per_npu: 1, latency_ns: 40000}\n"},
  };
  return nets;
}

const std::vector<std::string> kSchedulers = {"baseline", "themis-fifo", "themis-scf"};

// Uniform in [0, 1) from the top 53 bits of one draw; the standard's distributions are not used
// because their output is implementation-defined.
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }
int pick(std::mt19937_64& rng, int n) { return std::min(n - 1, static_cast<int>(uniform01(rng) * n)); }
double log_uniform(std::mt19937_64& rng, double lo, double hi) { return lo * std::pow(hi / lo, uniform01(rng)); }

}  // namespace

std::vector<ThemisRealNetwork> random_themis_networks(int count, std::uint64_t seed) {
  static const std::vector<std::vector<int>> kShapes = {{2, 2}, {2, 3}, {3, 2}, {2, 4}, {4, 2}, {2, 2, 2}};
  enum Kind { kRing, kFullyConnected, kSwitch };
  static const char* const kYamlKind[] = {"Ring", "FullyConnected", "Switch"};
  static const char* const kShort[] = {"RING", "FC", "SW"};
  std::mt19937_64 rng(seed);
  std::vector<ThemisRealNetwork> nets;
  for (int i = 1; i <= count; ++i) {
    // Two or three dimensions, then one of the shapes with that many.
    const bool three = pick(rng, 2) == 1;
    std::vector<const std::vector<int>*> shapes;
    for (const auto& sh : kShapes)
      if ((sh.size() == 3) == three) shapes.push_back(&sh);
    const std::vector<int>& sizes = *shapes[static_cast<std::size_t>(pick(rng, static_cast<int>(shapes.size())))];
    // Kinds: a switch needs a power of two; at least two kinds per network.
    std::vector<int> kinds;
    do {
      kinds.clear();
      for (int p : sizes) kinds.push_back(p == 3 ? pick(rng, 2) : pick(rng, 3));
    } while (std::all_of(kinds.begin(), kinds.end(), [&](int k) { return k == kinds[0]; }));
    std::string kind_names, shape, dims;
    int ranks = 1;
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      const int p = sizes[d], k = kinds[d];
      const int links = k == kRing ? 2 : k == kFullyConnected ? p - 1 : 1;
      const double aggregate = log_uniform(rng, kRandomMinBandwidthGbps, kRandomMaxBandwidthGbps);
      const double latency_us = std::round(log_uniform(rng, kRandomMinLatencyNs, kRandomMaxLatencyNs) / 1000);
      kind_names += fmt::format("{}{}", d ? "_" : "", kShort[k]);
      shape += fmt::format("{}{}", d ? "x" : "", p);
      dims +=
          fmt::format("  - {{kind: {}, size: {}, link_bandwidth_gbps: {:.6g}, links_per_npu: {}, latency_ns: {}}}\n",
                      kYamlKind[k], p, aggregate / links, links, latency_us * 1000);
      ranks *= p;
    }
    const std::string name = fmt::format("rnd{}-{}_{}-{}", seed, i, kind_names, shape);
    nets.push_back({name, ranks, fmt::format("name: {}\ndims:\n{}", name, dims)});
  }
  return nets;
}

std::vector<ThemisRealRow> run_themis_real(const ThemisRealOptions& o) {
  if (o.chunks < 1) throw InputError("chunks", fmt::format("must be >= 1, got {}", o.chunks));
  if (o.iters < 1) throw InputError("iters", fmt::format("must be >= 1, got {}", o.iters));
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(o.out) / "networks", ec);
  if (ec) throw InputError("out", fmt::format("cannot create '{}': {}", o.out, ec.message()));
  if (o.random < 0) throw InputError("random", fmt::format("must be >= 0, got {}", o.random));
  std::vector<ThemisRealNetwork> networks = study_networks();
  for (auto& n : random_themis_networks(o.random, o.seed)) networks.push_back(std::move(n));
  std::vector<ThemisRealRow> rows;
  const std::size_t total = networks.size() * kSchedulers.size();
  int most_ranks = 0;
  for (const auto& net : networks) most_ranks = std::max(most_ranks, net.ranks);
  if (most_ranks > usable_cpus())
    std::fprintf(stderr,
                 "chorus reproduce themis-real: jobs of up to %d ranks on %d CPUs: the ranks take turns on the "
                 "CPUs, which can lengthen the measured times (docs/schedule-executor.md)\n",
                 most_ranks, usable_cpus());
  for (const auto& net : networks) {
    const std::string file = (std::filesystem::path(o.out) / "networks" / (net.name + ".yaml")).string();
    write_text_file(file, net.yaml);
    for (const auto& sched : kSchedulers) {
      if (!o.quiet)
        std::fprintf(stderr, "[%zu/%zu] %s, %s on %d ranks ...\n", rows.size() + 1, total, net.name.c_str(),
                     sched.c_str(), net.ranks);
      const RunCollectiveArgs run{.topology = file,
                                  .size = o.size,
                                  .chunks = o.chunks,
                                  .scheduler = sched,
                                  .emulate = true,
                                  .iters = o.iters,
                                  .warmup = 1,
                                  .dim_backends = "shm"};
      // The study said above that its jobs may have more ranks than CPUs.
      const SelfJob job{.ranks = net.ranks, .program = run, .oversubscription_noted = true};
      const auto j = run_self_job(job, "time_ns", "reproduce themis-real");
      ThemisRealRow r;
      r.topology = net.name;
      r.scheduler = sched;
      r.ranks = net.ranks;
      r.size_bytes = j["size_bytes"].get<double>();
      r.chunks = j["chunks"].get<int>();
      r.measured_ns = j["time_ns"].get<double>();
      r.predicted_ns = j["predicted_time_ns"].get<double>();
      r.check = j["check"].get<std::string>();
      rows.push_back(r);
    }
  }
  return rows;
}

std::string write_themis_real_outputs(const std::vector<ThemisRealRow>& rows, const std::string& dir) {
  std::string csv = "topology,scheduler,ranks,size_bytes,chunks,measured_ns,predicted_ns,ratio,check\n";
  for (const auto& r : rows)
    csv += fmt::format("{},{},{},{:.0f},{},{:.0f},{:.0f},{:.4f},{}\n", r.topology, r.scheduler, r.ranks, r.size_bytes,
                       r.chunks, r.measured_ns, r.predicted_ns, r.measured_ns / r.predicted_ns, r.check);
  const std::string file = (std::filesystem::path(dir) / "real_vs_sim.csv").string();
  write_text_file(file, csv);
  return file;
}

std::string format_themis_real(const std::vector<ThemisRealRow>& rows) {
  std::string s =
      fmt::format("{:<32} {:<12} {:>5} {:>13} {:>13} {:>7} {:>9} {:>9}  {:<14} {}\n", "topology", "scheduler", "ranks",
                  "measured ms", "predicted ms", "ratio", "speedup", "(pred.)", "goal", "check");
  std::map<std::string, const ThemisRealRow*> base;
  for (const auto& r : rows)
    if (r.scheduler == "baseline") base[r.topology] = &r;
  int off = 0;
  double worst_ratio = 0, worst_speedup = 0;
  for (const auto& r : rows) {
    const auto* b = base.count(r.topology) ? base.at(r.topology) : &r;
    const double speedup = b->measured_ns / r.measured_ns, predicted = b->predicted_ns / r.predicted_ns;
    const double ratio_error = std::fabs(r.measured_ns / r.predicted_ns - 1);
    const double speedup_error = std::fabs(speedup - predicted);  // baseline rows: 0
    const bool bad_ratio = ratio_error > kRatioGoal, bad_speedup = speedup_error > kSpeedupGoal;
    off += bad_ratio || bad_speedup;
    worst_ratio = std::max(worst_ratio, ratio_error);
    worst_speedup = std::max(worst_speedup, speedup_error);
    const std::string goal = !bad_ratio && !bad_speedup ? "ok"
                             : bad_ratio && bad_speedup ? "OFF: both"
                             : bad_ratio                ? "OFF: ratio"
                                                        : "OFF: speedup";
    s += fmt::format("{:<32} {:<12} {:>5} {:>13.2f} {:>13.2f} {:>7.3f} {:>8.3f}x {:>8.3f}x  {:<14} {}\n", r.topology,
                     r.scheduler, r.ranks, r.measured_ns / 1e6, r.predicted_ns / 1e6, r.measured_ns / r.predicted_ns,
                     speedup, predicted, goal, r.check);
  }
  s += fmt::format(
      "{} of {} rows within the goal (ratio within {:.0f} %, speedup within {:.2f}x of the predicted); largest "
      "ratio error {:.1f} %, largest speedup error {:.3f}x\n",
      rows.size() - static_cast<std::size_t>(off), rows.size(), kRatioGoal * 100, kSpeedupGoal, worst_ratio * 100,
      worst_speedup);
  return s;
}

}  // namespace chorus::eval
