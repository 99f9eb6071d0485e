#include "diagnose/diagnosis.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace chorus::diagnose {

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::kDisagreement:
      return "disagreement";
    case Verdict::kParted:
      return "parted";
    case Verdict::kAllWaiting:
      return "all_waiting";
    case Verdict::kPeerWait:
      return "peer_wait";
    case Verdict::kMissing:
      return "missing";
    case Verdict::kFailed:
      return "failed";
  }
  return "unknown";
}

const char* to_string(Whereabouts w) {
  switch (w) {
    case Whereabouts::kInFinalize:
      return "in_finalize";
    case Whereabouts::kStarting:
      return "starting";
    case Whereabouts::kInOtherCall:
      return "in_call";
    case Whereabouts::kOutside:
      return "outside";
    case Whereabouts::kNoDump:
      return "no_dump";
  }
  return "unknown";
}

std::string rank_ranges(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string s;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    s += (s.empty() ? "" : ",") + (j == i ? std::to_string(ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]));
    i = j + 1;
  }
  return s;
}

namespace {

double seconds(std::int64_t ns) { return static_cast<double>(ns) / 1e9; }

// A dump written because of an error, whose detail is the error's text (not "SIGUSR1").
bool has_error(const FlightDump& d) {
  return !d.detail.empty() &&
         (d.reason == "timeout" || d.reason == "comm_error" || d.reason == "disagreement" || d.reason == "abort");
}

bool varying_count(const std::string& op) { return op.size() > 1 && op.back() == 'v'; }  // all_gatherv ...

// A dump's entry as a rank's call (peer as a world rank).
RankCall call_of(const FlightDump& d, const FlightCommunicator& c, const FlightEntry& e) {
  RankCall x;
  x.rank = d.rank;
  x.op = e.op;
  x.dtype = e.dtype;
  x.algorithm = e.algorithm;
  x.state = e.state;
  x.layer = e.layer;
  x.count = e.count;
  x.bytes = e.bytes;
  x.seq = e.seq;
  x.root = e.root;
  x.peer = e.peer >= 0 && static_cast<std::size_t>(e.peer) < c.ranks.size() ? c.ranks[e.peer] : e.peer;
  // In flight: waiting until the dump; failed: the dump follows the failure (a timeout's).
  if (e.state != "completed") x.waited_s = seconds(d.dumped_ns - e.started_ns);
  return x;
}

}  // namespace

std::string call_text(const RankCall& c) {
  std::string s = c.op;
  if (c.op != "barrier") s += fmt::format(" {} x{}", c.dtype, c.count);
  if (c.root >= 0) s += fmt::format(" root {}", c.root);
  if (c.peer >= 0) s += fmt::format(" {} rank {}", c.op == "send" ? "to" : "from", c.peer);
  return s;
}

namespace {

// The fields in which two calls at one seq differ.
std::vector<std::string> differences(const FlightEntry& a, const FlightEntry& b) {
  std::vector<std::string> d;
  if (a.op != b.op) d.emplace_back("op");
  if (a.dtype != b.dtype) d.emplace_back("dtype");
  if (a.op == b.op && !varying_count(a.op) && a.count != b.count) d.emplace_back("count");
  if (a.root != b.root) d.emplace_back("root");
  return d;
}

bool same_call(const FlightEntry* a, const FlightEntry* b) {
  return a != nullptr && b != nullptr && differences(*a, *b).empty();
}

// One communicator across the dumps that hold it.
struct CommView {
  std::string name, backend;
  std::vector<int> members;
  std::vector<std::pair<const FlightDump*, const FlightCommunicator*>> ranks;  // dumped members
};

std::vector<CommView> communicators(const DumpSet& set) {
  std::vector<CommView> views;
  for (const auto& d : set.dumps)
    for (const auto& c : d.communicators) {
      auto it = std::find_if(views.begin(), views.end(), [&](const CommView& v) { return v.name == c.name; });
      if (it == views.end()) {
        views.push_back({c.name, c.backend, c.ranks, {}});
        it = views.end() - 1;
      }
      it->ranks.emplace_back(&d, &c);
    }
  return views;
}

// Where rank `r` is instead of in `view`'s collective.
AbsentRank whereabouts(const DumpSet& set, const CommView& view, int r) {
  AbsentRank a;
  a.rank = r;
  const FlightDump* d = set.find(r);
  if (d == nullptr) {
    a.where = Whereabouts::kNoDump;
    const LauncherRank* lr = set.launcher ? set.launcher->find(r) : nullptr;
    if (lr == nullptr) {
      a.description = "no dump (and no launcher.json to say why)";
      return a;
    }
    a.state = lr->state;
    if (lr->state == "killed") a.signal = lr->signal;
    if (lr->state == "stopped")
      a.description = fmt::format("no dump: stopped (pid {} in state T: SIGSTOP or a debugger)", lr->pid);
    else if (lr->state == "killed")
      a.description = fmt::format("no dump: killed by signal {}", lr->signal.value_or(0));
    else if (lr->state == "exited")
      a.description = fmt::format("no dump: exited with status {}", lr->exit_status.value_or(0));
    else if (lr->beacon && lr->beacon->place == "starting")
      a.description = fmt::format("no dump: running (pid {}), still in init (not asked)", lr->pid);
    else
      a.description = fmt::format("no dump: running (pid {}) but wrote no flight record when asked", lr->pid);
    if (lr->beacon)
      a.description +=
          lr->beacon->started > lr->beacon->ended
              ? fmt::format("; its beacon: in a call ({} started, {} ended)", lr->beacon->started, lr->beacon->ended)
              : fmt::format("; its beacon: {}, no call in flight ({} operations)", lr->beacon->place,
                            lr->beacon->ended);
    return a;
  }
  const FlightCommunicator* own = d->find(view.name);
  a.issued = own != nullptr ? own->collectives : 0;
  const std::string after = fmt::format("after {} collectives on '{}'", a.issued, view.name);
  if (d->place == "in_finalize" || d->place == "finalized") {
    a.where = Whereabouts::kInFinalize;
    a.for_s = seconds(d->dumped_ns - d->place_since_ns);
    a.description = fmt::format("{} for {:.1f} s, {}",
                                d->place == "finalized" ? "finalized (out of chorus)" : "in finalize", a.for_s, after);
    return a;
  }
  if (d->place == "starting") {
    a.where = Whereabouts::kStarting;
    a.for_s = seconds(d->dumped_ns - d->place_since_ns);
    a.description = fmt::format("still starting (in init) for {:.1f} s", a.for_s);
    return a;
  }
  for (const auto& c : d->communicators)
    if (const FlightEntry* e = c.in_flight(); e != nullptr) {
      a.where = Whereabouts::kInOtherCall;
      a.communicator = c.name;
      a.call = call_of(*d, c, *e);
      a.description = fmt::format("in {}{} on '{}' for {:.1f} s, {}", call_text(*a.call),
                                  e->seq ? fmt::format(" seq {}", *e->seq) : "", c.name, a.call->waited_s, after);
      return a;
    }
  a.where = Whereabouts::kOutside;
  a.description = fmt::format("outside chorus (no call in flight), {}", after);
  return a;
}

// The first seq at which two members called different collectives, or at which a call failed
// in a disagreement.
std::optional<Finding> find_disagreement(const CommView& view) {
  std::set<std::int64_t> seqs;
  for (const auto& [d, c] : view.ranks)
    for (const auto& e : c->entries)
      if (e.seq) seqs.insert(*e.seq);
  for (const std::int64_t s : seqs) {
    std::vector<std::pair<const FlightDump*, const FlightEntry*>> at;
    for (const auto& [d, c] : view.ranks)
      if (const FlightEntry* e = c->find_seq(s)) at.emplace_back(d, e);
    Finding f;
    for (std::size_t i = 1; i < at.size() && f.differs.empty(); ++i) {
      f.differs = differences(*at[0].second, *at[i].second);
      if (f.differs.empty()) continue;
      // A skip: one rank's call at s is the other's at s + 1.
      const auto* ca =
          std::find_if(view.ranks.begin(), view.ranks.end(), [&](auto& p) { return p.first == at[0].first; })->second;
      const auto* cb =
          std::find_if(view.ranks.begin(), view.ranks.end(), [&](auto& p) { return p.first == at[i].first; })->second;
      if (same_call(at[i].second, ca->find_seq(s + 1)))
        f.skipped = fmt::format("rank {} skipped the {} rank {} issued at seq {}", at[i].first->rank, at[0].second->op,
                                at[0].first->rank, s);
      else if (same_call(at[0].second, cb->find_seq(s + 1)))
        f.skipped = fmt::format("rank {} skipped the {} rank {} issued at seq {}", at[0].first->rank, at[i].second->op,
                                at[i].first->rank, s);
    }
    const bool failed_disagreeing = std::any_of(
        at.begin(), at.end(), [](auto& p) { return p.second->state == "failed" && p.first->reason == "disagreement"; });
    if (f.differs.empty() && !failed_disagreeing) continue;
    f.verdict = Verdict::kDisagreement;
    f.communicator = view.name;
    f.backend = view.backend;
    f.seq = s;
    for (const auto& [d, e] : at) {
      const auto* c = d->find(view.name);
      f.calls.push_back(call_of(*d, *c, *e));
      if (has_error(*d)) f.details.push_back(fmt::format("rank {}: {}", d->rank, d->detail));
    }
    return f;
  }
  return std::nullopt;
}

}  // namespace

namespace {

void add_absent(const DumpSet& set, const CommView& view, const std::vector<int>& ranks, Finding& f) {
  for (int r : ranks) f.absent.push_back(whereabouts(set, view, r));
}

// With step markers on every dumped member: the first step every member has finished (and whose
// calls its ring holds whole) in which some issued fewer collectives on `view` than others.
std::vector<Finding::StepSkip> find_step_skips(const CommView& view) {
  struct Rank {
    int rank;
    const FlightCommunicator* c;
    std::map<std::int64_t, std::int64_t> per_step;  // collectives per step
  };
  std::vector<Rank> ranks;
  std::int64_t from = 0, to = INT64_MAX;  // the steps [from, to) every member finished whole
  for (const auto& [d, c] : view.ranks) {
    if (d->steps_marked == 0) return {};
    Rank r{d->rank, c, {}};
    for (const auto& e : c->entries)
      if (e.seq) ++r.per_step[e.step];
    // A ring that lost older collectives may hold its oldest step in part.
    const bool truncated = !r.per_step.empty() && c->collectives > static_cast<std::int64_t>(c->entries.size()) &&
                           c->find_seq(0) == nullptr;
    if (truncated) from = std::max(from, r.per_step.begin()->first + 1);
    to = std::min(to, d->steps_marked);
    ranks.push_back(std::move(r));
  }
  std::set<std::int64_t> steps;
  for (const auto& r : ranks)
    for (const auto& [s, n] : r.per_step)
      if (s >= from && s < to) steps.insert(s);
  for (const std::int64_t s : steps) {
    std::int64_t most = 0;
    for (const auto& r : ranks) most = std::max(most, r.per_step.count(s) ? r.per_step.at(s) : 0);
    std::vector<Finding::StepSkip> skips;
    for (const auto& r : ranks) {
      const std::int64_t n = r.per_step.count(s) ? r.per_step.at(s) : 0;
      if (n == most) continue;
      std::int64_t first = r.c->collectives;  // its first collective of step s or later
      for (const auto& e : r.c->entries)
        if (e.seq && e.step >= s) first = std::min(first, *e.seq);
      skips.push_back({r.rank, s, n, most, first});
    }
    if (!skips.empty()) return skips;
  }
  return {};
}

// Every collective the members' records hold on `view` is the same call (op, dtype, count, root).
bool all_alike(const CommView& view) {
  const FlightEntry* first = nullptr;
  std::size_t n = 0;
  for (const auto& [d, c] : view.ranks)
    for (const auto& e : c->entries) {
      if (!e.seq) continue;
      if (first == nullptr) first = &e;
      if (!same_call(first, &e)) return false;
      ++n;
    }
  return n > 1;
}

// The seq at which the members of `view` parted: the first one some member never issued while
// others did; or, every dumped member having issued as many, the last one if some wait in it.
std::optional<Finding> find_parting(const DumpSet& set, const CommView& view) {
  std::map<int, std::int64_t> issued;  // dumped members
  std::vector<int> no_dump;
  for (int r : view.members) {
    const FlightDump* d = set.find(r);
    if (d == nullptr) {
      no_dump.push_back(r);
      continue;
    }
    const FlightCommunicator* c = d->find(view.name);
    issued[r] = c != nullptr ? c->collectives : 0;
  }
  if (issued.empty()) return std::nullopt;
  std::int64_t lo = INT64_MAX, hi = 0;
  for (const auto& [r, n] : issued) lo = std::min(lo, n), hi = std::max(hi, n);
  const std::int64_t seq = hi > lo ? lo : lo - 1;
  if (seq < 0) return std::nullopt;
  Finding f;
  f.communicator = view.name;
  f.backend = view.backend;
  f.seq = seq;
  std::vector<int> elsewhere;
  for (const auto& [r, n] : issued) {
    const FlightDump* d = set.find(r);
    const FlightCommunicator* c = d->find(view.name);
    const FlightEntry* e = c != nullptr ? c->find_seq(seq) : nullptr;
    // Every dumped member having issued as many: those still in the last one wait in it, and so
    // do those whose call failed there (a timeout: they waited until it) — they did not leave.
    if (hi > lo ? n > seq : e != nullptr && e->state != "completed") {
      RankCall call = e != nullptr ? call_of(*d, *c, *e) : RankCall{};
      if (e == nullptr) call.rank = r, call.op = "(dropped from the ring)", call.seq = seq;
      f.waiting.push_back(call);
      f.longest_wait_s = std::max(f.longest_wait_s, call.waited_s);
    } else {
      elsewhere.push_back(r);
    }
  }
  if (hi == lo && f.waiting.empty()) return std::nullopt;  // all issued as many, none in flight
  add_absent(set, view, elsewhere, f);
  add_absent(set, view, no_dump, f);
  // Every member failed in the same last call and none is missing: a failure (find_failures),
  // not a parting.
  if (hi == lo && f.absent.empty() &&
      std::all_of(f.waiting.begin(), f.waiting.end(), [](const RankCall& w) { return w.state == "failed"; }))
    return std::nullopt;
  f.verdict = f.absent.empty() ? Verdict::kAllWaiting : Verdict::kParted;
  if (f.verdict == Verdict::kParted) {
    // A member with a record that issued fewer: it left early, or skipped calls before. Steps
    // tell them apart; without them, calls that differ do (find_disagreement), alike ones do not.
    const bool fewer = std::any_of(f.absent.begin(), f.absent.end(), [](const AbsentRank& a) { return a.issued >= 0; });
    f.step_skips = find_step_skips(view);
    const bool marked =
        std::all_of(view.ranks.begin(), view.ranks.end(), [](auto& p) { return p.first->steps_marked > 0; });
    f.alike = fewer && !marked && all_alike(view);
  }
  for (const auto& w : f.waiting)
    if (const FlightDump* d = set.find(w.rank); d != nullptr && has_error(*d))
      f.details.push_back(fmt::format("rank {}: {}", d->rank, d->detail));
  return f;
}

bool covered(const std::vector<Finding>& findings, int rank, const std::string& comm) {
  for (const auto& f : findings)
    if (f.communicator == comm)
      for (const auto& w : f.waiting)
        if (w.rank == rank) return true;
  return false;
}

// Ranks in a send or recv no collective finding explains, with where their peer is.
void find_peer_waits(const DumpSet& set, const std::vector<CommView>& views, std::vector<Finding>& findings) {
  std::vector<Finding> more;
  for (const auto& view : views)
    for (const auto& [d, c] : view.ranks) {
      const FlightEntry* e = c->in_flight();
      if (e == nullptr || e->seq || covered(findings, d->rank, view.name)) continue;
      Finding f;
      f.verdict = Verdict::kPeerWait;
      f.communicator = view.name;
      f.backend = view.backend;
      f.waiting.push_back(call_of(*d, *c, *e));
      f.longest_wait_s = f.waiting.back().waited_s;
      if (f.waiting.back().peer >= 0) f.absent.push_back(whereabouts(set, view, f.waiting.back().peer));
      more.push_back(std::move(f));
    }
  findings.insert(findings.end(), more.begin(), more.end());
}

// The member that started collective `seq` of `view` after another had timed out in it and
// written its record (times on one clock: CLOCK_MONOTONIC on one host, else the wall clock).
std::optional<Finding::LateArrival> late_arrival(const CommView& view, std::int64_t seq) {
  std::set<std::string> hosts;
  for (const auto& [d, c] : view.ranks) hosts.insert(d->host);
  const bool wall = hosts.size() > 1;
  struct At {
    int rank;
    std::int64_t start, gave_up;  // gave_up: its record's time, if it timed out there
  };
  std::vector<At> at;
  for (const auto& [d, c] : view.ranks)
    if (const FlightEntry* e = c->find_seq(seq)) {
      const std::int64_t offset = wall ? d->wall_offset_ns : 0;
      const bool timed_out = e->state == "failed" && d->reason == "timeout";
      at.push_back({d->rank, e->started_ns + offset, timed_out ? d->dumped_ns + offset : INT64_MAX});
    }
  if (at.size() < 2) return std::nullopt;
  const auto last = std::max_element(at.begin(), at.end(), [](const At& a, const At& b) { return a.start < b.start; });
  const auto first = std::min_element(at.begin(), at.end(), [](const At& a, const At& b) { return a.start < b.start; });
  const auto gave_up =
      std::min_element(at.begin(), at.end(), [](const At& a, const At& b) { return a.gave_up < b.gave_up; });
  if (gave_up == last || gave_up->gave_up == INT64_MAX || last->start <= gave_up->gave_up) return std::nullopt;
  return Finding::LateArrival{last->rank, gave_up->rank, seconds(last->start - first->start)};
}

// Failed operations no other finding explains (a timeout, a connection lost).
void find_failures(const std::vector<CommView>& views, std::vector<Finding>& findings) {
  for (const auto& view : views) {
    if (std::any_of(findings.begin(), findings.end(), [&](const Finding& f) { return f.communicator == view.name; }))
      continue;
    Finding f;
    f.verdict = Verdict::kFailed;
    f.communicator = view.name;
    f.backend = view.backend;
    for (const auto& [d, c] : view.ranks)
      for (const auto& e : c->entries)
        if (e.state == "failed") {
          f.calls.push_back(call_of(*d, *c, e));
          if (has_error(*d)) f.details.push_back(fmt::format("rank {}: {}", d->rank, d->detail));
          if (e.seq && f.seq < 0) f.seq = *e.seq;
          break;
        }
    if (f.seq >= 0) f.late = late_arrival(view, f.seq);
    if (!f.calls.empty()) findings.push_back(std::move(f));
  }
}

// Members of a communicator nothing above explains that wrote no record (killed, stopped or
// exited between two calls, as launcher.json may say): "no problem" would be untrue of them.
void find_missing(const DumpSet& set, const std::vector<CommView>& views, std::vector<Finding>& findings) {
  for (const auto& view : views) {
    if (std::any_of(findings.begin(), findings.end(), [&](const Finding& f) { return f.communicator == view.name; }))
      continue;
    Finding f;
    f.verdict = Verdict::kMissing;
    f.communicator = view.name;
    f.backend = view.backend;
    for (const auto& [d, c] : view.ranks) f.recorded = std::max(f.recorded, c->collectives);
    for (int r : view.members)
      if (set.find(r) == nullptr) f.absent.push_back(whereabouts(set, view, r));
    if (!f.absent.empty()) findings.push_back(std::move(f));
  }
}

int verdict_rank(Verdict v) {
  switch (v) {
    case Verdict::kDisagreement:
      return 0;
    case Verdict::kParted:
      return 1;
    case Verdict::kAllWaiting:
      return 2;
    case Verdict::kPeerWait:
      return 3;
    case Verdict::kMissing:
      return 4;
    case Verdict::kFailed:
      return 5;
  }
  return 6;
}

}  // namespace

Diagnosis diagnose(const DumpSet& set) {
  Diagnosis out;
  out.dir = set.dir;
  out.world_size = set.world_size;
  for (const auto& d : set.dumps) {
    out.dumped.push_back(d.rank);
    if (std::find(out.jobs.begin(), out.jobs.end(), d.job) == out.jobs.end()) out.jobs.push_back(d.job);
  }
  out.missing = set.missing_ranks();
  out.warnings = set.warnings;
  out.launcher = set.launcher;
  const std::vector<CommView> views = communicators(set);
  for (const auto& view : views) {
    if (auto f = find_disagreement(view)) {
      out.findings.push_back(std::move(*f));
      continue;
    }
    if (auto f = find_parting(set, view)) out.findings.push_back(std::move(*f));
  }
  find_peer_waits(set, views, out.findings);
  find_failures(views, out.findings);
  find_missing(set, views, out.findings);
  std::stable_sort(out.findings.begin(), out.findings.end(), [](const Finding& a, const Finding& b) {
    if (verdict_rank(a.verdict) != verdict_rank(b.verdict)) return verdict_rank(a.verdict) < verdict_rank(b.verdict);
    return a.longest_wait_s > b.longest_wait_s;
  });
  if (out.findings.empty())
    for (const auto& view : views) {
      std::int64_t n = 0;
      for (const auto& [d, c] : view.ranks) n = std::max(n, c->collectives);
      out.completed.push_back({view.name, n});
    }
  return out;
}

}  // namespace chorus::diagnose
