#include "diagnose/stragglers.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "diagnose/diagnosis.h"

namespace chorus::diagnose {

namespace {

// A straggler is last at more than this share of the collectives it took part in, and at
// least kMinimumLast of them: with n ranks arriving at random each is last 1/n of the time.
constexpr double kClearMajority = 2.0 / 3.0;
constexpr int kMinimumLast = 3;

std::string seconds_text(double s) {
  return s < 1e-3 ? fmt::format("{:.1f} us", s * 1e6)
         : s < 1  ? fmt::format("{:.2f} ms", s * 1e3)
                  : fmt::format("{:.3f} s", s);
}

}  // namespace

StragglerReport find_stragglers(const DumpSet& set) {
  // Ranks of one host share CLOCK_MONOTONIC: their starts compare as they are. Across hosts, on
  // rank 0's clock when every dump carries its offset to it (estimated at init, with a log): per
  // host the offset of its dump with the smallest error bound (rank 0's host: rank 0's, 0), as
  // `chorus profile` does with the logs; else on the wall clock (started_ns + wall_offset_ns).
  std::set<std::string> hosts;
  bool offsets = true;
  std::map<std::string, const FlightDump*> best;  // per host
  for (const auto& d : set.dumps) {
    hosts.insert(d.host);
    offsets = offsets && d.clock_to_rank0_ns.has_value();
    const FlightDump*& b = best[d.host];
    if (d.clock_to_rank0_ns && (b == nullptr || d.clock_error_ns < b->clock_error_ns)) b = &d;
  }
  const bool cross_host = hosts.size() > 1;
  const bool aligned = cross_host && offsets;
  std::int64_t error_ns = 0;
  if (aligned)
    for (const auto& [host, b] : best) error_ns = std::max(error_ns, b->clock_error_ns);
  std::vector<CollectiveStart> starts;
  for (const auto& d : set.dumps) {
    const std::int64_t shift = aligned ? *best.at(d.host)->clock_to_rank0_ns : cross_host ? d.wall_offset_ns : 0;
    for (const auto& c : d.communicators)
      for (const auto& e : c.entries)
        if (e.seq) starts.push_back({c.name, e.op, *e.seq, d.rank, e.started_ns + shift});
  }
  StragglerReport r = find_stragglers(starts, cross_host);
  if (aligned)
    r.clock = fmt::format("rank 0's clock ({} hosts; each dump's offset estimated at init, error at most {:.1f} us)",
                          hosts.size(), static_cast<double>(error_ns) / 1e3);
  else if (cross_host)
    r.clock = fmt::format(
        "the wall clock ({} hosts; the dumps carry no clock offset to rank 0: runs with a "
        "communication log, CHORUS_RT_LOG, do)",
        hosts.size());
  else
    r.clock = "CLOCK_MONOTONIC (one host)";
  return r;
}

StragglerReport find_stragglers(const std::vector<CollectiveStart>& all, bool cross_host) {
  StragglerReport out;
  out.cross_host = cross_host;
  // communicator -> seq -> (rank, start, op)
  struct Start {
    int rank;
    std::int64_t ns;
    std::string op;
  };
  std::map<std::string, std::map<std::int64_t, std::vector<Start>>> starts;
  for (const auto& s : all) starts[s.communicator][s.seq].push_back({s.rank, s.start_ns, s.op});
  std::map<int, Lateness> late;
  for (const auto& [comm, seqs] : starts)
    for (const auto& [seq, at] : seqs) {
      if (at.size() < 2) continue;
      const auto last =
          std::max_element(at.begin(), at.end(), [](const Start& a, const Start& b) { return a.ns < b.ns; });
      const auto first =
          std::min_element(at.begin(), at.end(), [](const Start& a, const Start& b) { return a.ns < b.ns; });
      // Several ranks starting last at the same nanosecond: no last arriver.
      const bool tie = std::count_if(at.begin(), at.end(), [&](const Start& x) { return x.ns == last->ns; }) > 1;
      out.arrivals.push_back({comm, last->op, seq, static_cast<int>(at.size()), tie ? -1 : last->rank,
                              static_cast<double>(last->ns - first->ns) / 1e9});
      for (const auto& s : at) {
        Lateness& l = late[s.rank];
        l.rank = s.rank;
        ++l.compared;
        if (tie) continue;
        if (&s == &*last) ++l.last;
        late[last->rank].others_lost_s += static_cast<double>(last->ns - s.ns) / 1e9;
      }
    }
  for (const auto& [rank, l] : late) {
    out.ranks.push_back(l);
    if (l.last >= kMinimumLast && l.last > kClearMajority * l.compared) out.stragglers.push_back(rank);
  }
  return out;
}

std::string to_text(const StragglerReport& r) {
  if (r.arrivals.empty()) return "stragglers: no collective was started by several ranks: nothing to compare\n";
  std::vector<double> skews;
  for (const auto& a : r.arrivals) skews.push_back(a.skew_s);
  std::sort(skews.begin(), skews.end());
  std::string s = fmt::format("stragglers: {} collectives started by several ranks, start times compared on {}\n",
                              r.arrivals.size(),
                              !r.clock.empty() ? r.clock
                              : r.cross_host   ? "the wall clock (several hosts)"
                                               : "CLOCK_MONOTONIC (one host)");
  s += fmt::format("  skew (last start - first): median {}, largest {}\n", seconds_text(skews[skews.size() / 2]),
                   seconds_text(skews.back()));
  std::vector<Arrival> worst = r.arrivals;
  std::stable_sort(worst.begin(), worst.end(), [](const Arrival& a, const Arrival& b) { return a.skew_s > b.skew_s; });
  if (worst.size() > 8) worst.resize(8);
  s += fmt::format("  the {} largest skews (--json lists every collective):\n", worst.size());
  for (const auto& a : worst)
    s += fmt::format("    '{}' seq {} {}: {}, skew {}\n", a.communicator, a.seq, a.op,
                     a.last_rank >= 0 ? fmt::format("last rank {}", a.last_rank) : "no single last rank",
                     seconds_text(a.skew_s));
  s += "  rank  last  of  the others lost waiting for it\n";
  for (const auto& l : r.ranks)
    s += fmt::format("  {:>4}  {:>4}  {:>3}  {}\n", l.rank, l.last, l.compared, seconds_text(l.others_lost_s));
  for (int rank : r.stragglers) {
    const auto& l = *std::find_if(r.ranks.begin(), r.ranks.end(), [&](const Lateness& x) { return x.rank == rank; });
    s += fmt::format("straggler: rank {}, last at {} of {} collectives; the others lost {} waiting for it\n", rank,
                     l.last, l.compared, seconds_text(l.others_lost_s));
  }
  if (r.stragglers.empty()) s += "no straggler: no rank is last at a clear majority (two thirds) of its collectives\n";
  return s;
}

nlohmann::json to_json(const StragglerReport& r) {
  nlohmann::json arrivals = nlohmann::json::array(), ranks = nlohmann::json::array();
  for (const auto& a : r.arrivals)
    arrivals.push_back({{"communicator", a.communicator},
                        {"seq", a.seq},
                        {"op", a.op},
                        {"ranks", a.ranks},
                        {"last_rank", a.last_rank},
                        {"skew_s", a.skew_s}});
  for (const auto& l : r.ranks)
    ranks.push_back({{"rank", l.rank}, {"last", l.last}, {"compared", l.compared}, {"others_lost_s", l.others_lost_s}});
  return {{"cross_host", r.cross_host},
          {"clock", r.clock},
          {"arrivals", arrivals},
          {"ranks", ranks},
          {"stragglers", r.stragglers}};
}

}  // namespace chorus::diagnose
