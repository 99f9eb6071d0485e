#include "rt_tools/themis_real_study.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/text_file.h"
#include "rt_tools/launcher.h"
#include "rt_tools/self_job.h"

namespace chorus::rt {

namespace {

// Table 2-like networks scaled to one 2-core host: few ranks, and bandwidths (Gb/s per rank)
// low enough that pacing, not the host's real transfers, sets every stage's time.
struct StudyNetwork {
  std::string name;
  int ranks;
  std::string yaml;
};

const std::vector<StudyNetwork>& study_networks() {
  static const std::vector<StudyNetwork> nets = {
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

}  // namespace

std::vector<ThemisRealRow> run_themis_real(const ThemisRealOptions& o) {
  if (o.chunks < 1) throw InputError("chunks", fmt::format("must be >= 1, got {}", o.chunks));
  if (o.iters < 1) throw InputError("iters", fmt::format("must be >= 1, got {}", o.iters));
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(o.out) / "networks", ec);
  if (ec) throw InputError("out", fmt::format("cannot create '{}': {}", o.out, ec.message()));
  const std::string exe = self_exe("reproduce themis-real");
  std::vector<ThemisRealRow> rows;
  const std::size_t total = study_networks().size() * kSchedulers.size();
  int most_ranks = 0;
  for (const auto& net : study_networks()) most_ranks = std::max(most_ranks, net.ranks);
  if (most_ranks > usable_cpus())
    std::fprintf(stderr,
                 "chorus reproduce themis-real: jobs of up to %d ranks on %d CPUs: the ranks take turns on the "
                 "CPUs, which can lengthen the measured times (docs/schedule-executor.md)\n",
                 most_ranks, usable_cpus());
  for (const auto& net : study_networks()) {
    const std::string file = (std::filesystem::path(o.out) / "networks" / (net.name + ".yaml")).string();
    write_text_file(file, net.yaml);
    for (const auto& sched : kSchedulers) {
      if (!o.quiet)
        std::fprintf(stderr, "[%zu/%zu] %s, %s on %d ranks ...\n", rows.size() + 1, total, net.name.c_str(),
                     sched.c_str(), net.ranks);
      const std::string cmd = fmt::format(
          "{}=1 '{}' launch -n {} -- '{}' run collective -t '{}' --size {} --chunks {} --scheduler {} --emulate "
          "--iters {} --warmup 1 --dim-backends shm --json",  // cli-command-line: a child chorus
          kOversubscribedNoted, exe, net.ranks, exe, file, o.size, o.chunks, sched, o.iters);
      const auto j = nlohmann::json::parse(run_capture(cmd, "reproduce themis-real"), nullptr, false);
      if (j.is_discarded() || !j.contains("time_ns"))
        throw InputError("reproduce themis-real", fmt::format("no JSON report from '{}'", cmd));
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
  // The CSV (the figures: apps/chorus/run_commands.cpp).
  std::string csv = "topology,scheduler,ranks,size_bytes,chunks,measured_ns,predicted_ns,ratio,check\n";
  for (const auto& r : rows)
    csv += fmt::format("{},{},{},{:.0f},{},{:.0f},{:.0f},{:.4f},{}\n", r.topology, r.scheduler, r.ranks, r.size_bytes,
                       r.chunks, r.measured_ns, r.predicted_ns, r.measured_ns / r.predicted_ns, r.check);
  write_text_file((std::filesystem::path(o.out) / "real_vs_sim.csv").string(), csv);
  return rows;
}

std::string format_themis_real(const std::vector<ThemisRealRow>& rows) {
  std::string s = fmt::format("{:<24} {:<12} {:>5} {:>13} {:>13} {:>7} {:>9} {:>9}  {}\n", "topology", "scheduler",
                              "ranks", "measured ms", "predicted ms", "ratio", "speedup", "(pred.)", "check");
  std::map<std::string, const ThemisRealRow*> base;
  for (const auto& r : rows)
    if (r.scheduler == "baseline") base[r.topology] = &r;
  for (const auto& r : rows) {
    const auto* b = base.count(r.topology) ? base.at(r.topology) : &r;
    s += fmt::format("{:<24} {:<12} {:>5} {:>13.2f} {:>13.2f} {:>7.3f} {:>8.3f}x {:>8.3f}x  {}\n", r.topology,
                     r.scheduler, r.ranks, r.measured_ns / 1e6, r.predicted_ns / 1e6, r.measured_ns / r.predicted_ns,
                     b->measured_ns / r.measured_ns, b->predicted_ns / r.predicted_ns, r.check);
  }
  return s;
}

}  // namespace chorus::rt
