// The diagnosis as one screen of text and as JSON (`chorus doctor`, `chorus launch` after a
// stall or a failure).
#include <fmt/format.h>

#include "diagnose/diagnosis.h"

namespace chorus::diagnose {

namespace {

std::string header(const Diagnosis& d) {
  std::string s = fmt::format("chorus doctor: {}: flight records of rank{} {} (world of {})", d.dir,
                              d.dumped.size() == 1 ? "" : "s", rank_ranges(d.dumped), d.world_size);
  if (d.jobs.size() == 1) s += fmt::format(", job {}", d.jobs[0]);
  s += "\n";
  if (d.launcher) {
    if (d.launcher->reason == "stall")
      s += fmt::format("launcher: stopped the job after a stall (no operation started or ended for {:g} s)\n",
                       d.launcher->stall_timeout_s);
    else
      s += fmt::format("launcher: stopped the job after rank {} failed\n", d.launcher->failed_rank);
  }
  for (const auto& w : d.warnings) s += "warning: " + w + "\n";
  if (!d.missing.empty())
    s += fmt::format("no flight record from rank{} {}\n", d.missing.size() == 1 ? "" : "s", rank_ranges(d.missing));
  return s;
}

// The call, its algorithm, and the layer that issued it when not the API itself (torch, fusion...).
std::string call_line(const RankCall& c) {
  std::string extra;
  if (!c.algorithm.empty()) extra = "algorithm " + c.algorithm;
  if (!c.layer.empty() && c.layer != "api") extra += (extra.empty() ? "" : ", ") + fmt::format("from {}", c.layer);
  return extra.empty() ? call_text(c) : fmt::format("{} ({})", call_text(c), extra);
}

std::string waiting_lines(const Finding& f, const char* label) {
  if (f.waiting.size() <= 4) {
    std::string s;
    for (const auto& w : f.waiting)
      s += fmt::format("  {} rank {}{}\n", label, w.rank,
                       w.state == "started"  ? fmt::format(" for {:.1f} s", w.waited_s)
                       : w.state == "failed" ? fmt::format(" for {:.1f} s, then failed", w.waited_s)
                                             : fmt::format(" ({})", w.state));
    return s;
  }
  std::vector<int> ranks;
  double lo = 1e300, hi = 0;
  for (const auto& w : f.waiting) {
    ranks.push_back(w.rank);
    lo = std::min(lo, w.waited_s);
    hi = std::max(hi, w.waited_s);
  }
  return fmt::format("  {} ranks {} for {:.1f} to {:.1f} s\n", label, rank_ranges(ranks), lo, hi);
}

// `label` for ranks with a flight record; those without one may have issued the call or not.
std::string absent_lines(const Finding& f, const char* label) {
  std::string s;
  const std::size_t shown = f.absent.size() <= 8 ? f.absent.size() : 7;
  for (std::size_t i = 0; i < shown; ++i)
    s += fmt::format("  {} rank {}: {}\n", f.absent[i].where == Whereabouts::kNoDump ? "no record:      " : label,
                     f.absent[i].rank, f.absent[i].description);
  if (shown < f.absent.size())
    s += fmt::format("  ... and {} more ranks (--json lists them)\n", f.absent.size() - shown);
  return s;
}

std::string finding_text(const Finding& f) {
  std::string s;
  const std::string where = fmt::format("on communicator '{}' (backend {})", f.communicator, f.backend);
  switch (f.verdict) {
    case Verdict::kDisagreement: {
      std::string what;
      for (const auto& x : f.differs) what += (what.empty() ? "" : ", ") + x;
      s += fmt::format("disagreement {} at collective seq {}: the ranks called different collectives{}\n", where, f.seq,
                       what.empty() ? "" : " (" + what + " differ)");
      for (const auto& c : f.calls) s += fmt::format("  rank {}: {} ({})\n", c.rank, call_line(c), c.state);
      if (!f.skipped.empty()) s += "  " + f.skipped + "\n";
      break;
    }
    case Verdict::kParted:
      s += fmt::format("parted {} at collective seq {}: {}\n", where, f.seq, call_line(f.waiting.front()));
      s += waiting_lines(f, "waiting in it:  ");
      s += absent_lines(f, "never issued it:");
      for (const auto& k : f.step_skips)
        s += fmt::format(
            "  rank {} issued {} collective{} in step {} where the others issued {}: it skipped {} (at or after its "
            "seq {})\n",
            k.rank, k.issued, k.issued == 1 ? "" : "s", k.step, k.others,
            k.others - k.issued == 1 ? std::string("one") : std::to_string(k.others - k.issued), k.from_seq);
      if (f.alike)
        s += fmt::format(
            "  every collective the records hold on '{}' is the same call: a rank that skipped one earlier cannot be "
            "told from one that left early (mark each step's end with rt::mark_step() or chorus.mark_step(), in a "
            "torch program CHORUS_MARK_STEPS=optimizer, to tell)\n",
            f.communicator);
      break;
    case Verdict::kAllWaiting:
      s += fmt::format("all waiting {} in collective seq {}: {}: every rank issued it, none has completed it\n", where,
                       f.seq, call_line(f.waiting.front()));
      s += waiting_lines(f, "waiting in it:");
      s += "  no rank is missing: a slow rank or the transport (see chorus doctor --stragglers)\n";
      break;
    case Verdict::kPeerWait:
      s += fmt::format("waiting for a peer {}: rank {} in {} for {:.1f} s\n", where, f.waiting.front().rank,
                       call_line(f.waiting.front()), f.waiting.front().waited_s);
      s += absent_lines(f, "its peer:");
      break;
    case Verdict::kMissing:
      s += fmt::format("missing {}: the ranks with a record are in no call on it, after {} collectives\n", where,
                       f.recorded);
      s += absent_lines(f, "");
      break;
    case Verdict::kFailed:
      s += fmt::format("failed {}{}\n", where, f.seq >= 0 ? fmt::format(" at collective seq {}", f.seq) : "");
      for (const auto& c : f.calls)
        s += fmt::format("  rank {}: {}{} (failed)\n", c.rank, call_line(c),
                         c.seq ? fmt::format(" seq {}", *c.seq) : "");
      if (f.late)
        s += fmt::format(
            "  rank {} started it {:.1f} s after the first, when rank {} had already given up on it: "
            "the others waited for rank {}\n",
            f.late->rank, f.late->after_s, f.late->gave_up, f.late->rank);
      break;
  }
  for (const auto& x : f.details) s += "  error of " + x + "\n";
  return s;
}

nlohmann::json call_json(const RankCall& c) {
  return {{"rank", c.rank},   {"op", c.op},       {"dtype", c.dtype},
          {"count", c.count}, {"bytes", c.bytes}, {"seq", c.seq ? nlohmann::json(*c.seq) : nlohmann::json(nullptr)},
          {"root", c.root},   {"peer", c.peer},   {"algorithm", c.algorithm},
          {"state", c.state}, {"layer", c.layer}, {"waited_s", c.waited_s}};
}

nlohmann::json finding_json(const Finding& f) {
  nlohmann::json waiting = nlohmann::json::array(), calls = nlohmann::json::array(), absent = nlohmann::json::array();
  for (const auto& w : f.waiting) waiting.push_back(call_json(w));
  for (const auto& c : f.calls) calls.push_back(call_json(c));
  for (const auto& a : f.absent)
    absent.push_back({{"rank", a.rank},
                      {"where", to_string(a.where)},
                      {"issued", a.issued},
                      {"communicator", a.communicator},
                      {"call", a.call ? call_json(*a.call) : nlohmann::json(nullptr)},
                      {"for_s", a.for_s},
                      {"state", a.state.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.state)},
                      {"signal", a.signal ? nlohmann::json(*a.signal) : nlohmann::json(nullptr)},
                      {"description", a.description}});
  nlohmann::json step_skips = nlohmann::json::array();
  for (const auto& k : f.step_skips)
    step_skips.push_back(
        {{"rank", k.rank}, {"step", k.step}, {"issued", k.issued}, {"others", k.others}, {"from_seq", k.from_seq}});
  const RankCall* lead = !f.waiting.empty() ? &f.waiting.front() : !f.calls.empty() ? &f.calls.front() : nullptr;
  return {{"verdict", to_string(f.verdict)},
          {"communicator", f.communicator},
          {"backend", f.backend},
          {"seq", f.seq >= 0 ? nlohmann::json(f.seq) : nlohmann::json(nullptr)},
          {"op", lead != nullptr ? lead->op : ""},
          {"algorithm", lead != nullptr ? lead->algorithm : ""},
          {"waiting", waiting},
          {"absent", absent},
          {"calls", calls},
          {"differs", f.differs},
          {"skipped", f.skipped},
          {"step_skips", step_skips},
          {"alike", f.alike},
          {"details", f.details},
          {"longest_wait_s", f.longest_wait_s},
          {"recorded", f.recorded >= 0 ? nlohmann::json(f.recorded) : nlohmann::json(nullptr)},
          {"late",
           f.late ? nlohmann::json{{"rank", f.late->rank}, {"gave_up", f.late->gave_up}, {"after_s", f.late->after_s}}
                  : nlohmann::json(nullptr)}};
}

}  // namespace

std::string to_text(const Diagnosis& d) {
  std::string s = header(d);
  if (d.findings.empty()) {
    if (d.completed.size() == 1)
      return s + fmt::format("no problem found: all ranks completed the same {} collectives on '{}'\n",
                             d.completed[0].collectives, d.completed[0].communicator);
    std::string each;
    for (const auto& c : d.completed)
      each += fmt::format("{}{} on '{}'", each.empty() ? "" : ", ", c.collectives, c.communicator);
    return s + "no problem found: all ranks completed the same collectives" + (each.empty() ? "" : ": " + each) + "\n";
  }
  // One screen: the first findings (the most telling), the count of the others.
  constexpr std::size_t kShown = 6;
  for (std::size_t i = 0; i < d.findings.size() && i < kShown; ++i) {
    if (d.findings.size() > 1) s += fmt::format("[{}/{}] ", i + 1, d.findings.size());
    s += finding_text(d.findings[i]);
  }
  if (d.findings.size() > kShown) s += fmt::format("... and {} more (--json lists them)\n", d.findings.size() - kShown);
  return s;
}

nlohmann::json to_json(const Diagnosis& d) {
  nlohmann::json findings = nlohmann::json::array(), completed = nlohmann::json::array();
  for (const auto& f : d.findings) findings.push_back(finding_json(f));
  for (const auto& c : d.completed)
    completed.push_back({{"communicator", c.communicator}, {"collectives", c.collectives}});
  nlohmann::json launcher = nullptr;
  if (d.launcher)
    launcher = {{"reason", d.launcher->reason},
                {"stall_timeout_s", d.launcher->stall_timeout_s},
                {"failed_rank", d.launcher->failed_rank}};
  return {{"dir", d.dir},
          {"world_size", d.world_size},
          {"dumped_ranks", d.dumped},
          {"missing_ranks", d.missing},
          {"jobs", d.jobs},
          {"warnings", d.warnings},
          {"launcher", launcher},
          {"verdict", d.findings.empty() ? "no_problem" : to_string(d.findings.front().verdict)},
          {"findings", findings},
          {"completed", completed}};
}

}  // namespace chorus::diagnose
