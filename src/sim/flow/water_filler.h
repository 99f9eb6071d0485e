#pragma once
// Max-min fair rates by progressive filling (water-filling), over a set of flows that persists
// between runs: the flow engine adds a flow when it starts sending and removes it at its last
// byte, and runs the filler after each such change.
//
// A run: every link with members gets its fair share (capacity / unfrozen flows). Repeatedly, the
// link of smallest share is the bottleneck of its unfrozen flows: they get that share, are frozen
// and leave the other links of their paths. Shares only grow as the filling proceeds (flows frozen
// at the smallest share leave a link with at least its share per flow), so a min-heap whose stale
// entries are re-keyed only when they surface finds each bottleneck in O(log L) (L busy links);
// while few distinct levels remain (circuits of one capacity, links without any) scans of the
// links level by level are cheaper and go first.
//
// Removals alone re-fill only what they can change. Let k be the first bottleneck of the last run
// that froze a flow removed since. Every bottleneck before k carried no removed flow (it would
// have frozen it), its share is unchanged without them, and every other link's share can only have
// grown; so the new filling runs through the same bottlenecks up to k, and the flows they froze
// keep their rates: every bundle whose rate is below k's level (the smallest rate of a bundle that
// lost flows) keeps it. The bundles at or above that level, over what the others leave of each
// link, are a filling of their own, and a filling splits into the connected parts of its graph of
// bundles and links: a part with no link that lost flows has the same capacities and bundles as
// before and fills as before (and a part reached only from higher lost bundles has its own,
// higher level). So a run opens only what a search from each lost bundle reaches through the
// members of the links it meets, at or above that bundle's rate; each link keeps its members
// split by its searches, the ones below a search's level behind the front with their rates beside
// them, so that a search reads the front and only the rates of those behind (open_on). An
// all-to-all's flows end fastest-first, so a run touches a few links' flows instead of a million.
// A flow added, or new capacities, fill everything anew (and list no changed flows: nearly all
// change, and the caller reads every member's rate in its own order).
//
// Flows with the same path always get the same rate (nothing in max-min fairness tells them
// apart), so the filler works on bundles: the flows present with one path, as one record with a
// weight. A bundle takes weight x share of each link on its path and counts weight times among a
// link's unfrozen flows. A training iteration's traffic repeats its paths (an all-to-all per
// table, ring steps of several all-reduces on the same links): on TopoOpt's fabric at 128 servers
// a re-fill holds 14 flows per bundle on average, and the filler's work falls by that factor.
//
// The link -> bundles membership is kept between runs and each bundle is one 48-byte record (its
// rate, its first flow, its path inline when it has at most six links), so a run is a pass over the re-filled
// bundles' path entries with no lists rebuilt. Passes over a link's members read a dense array of
// 8 bytes per bundle (its kept rate, or that it is open or gone) before any record.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <tuple>
#include <vector>

#include "sim/flow/bundle_index.h"

namespace chorus::sim::flow {

class WaterFiller {
 public:
  explicit WaterFiller(std::size_t links);

  // Flow `id` (ids are dense: memory grows with the largest) joins with its path (link indices
  // < links, non-empty). An id is a member at most once at a time (it may join again after
  // leaving: a flow rerouted, FlowEngine::reroute).
  void add(int id, std::span<const int> path);
  // Room for ids below `ids` (saves re-growing when the caller knows how many will come).
  void reserve(std::size_t ids);
  void remove(int id);
  // Hints for a remove(id) a few calls ahead: fetch the member's entries, then (a few calls later,
  // once they are in) its bundle's record.
  void prefetch_member(int id) const {
    const auto i = static_cast<std::size_t>(id);
    __builtin_prefetch(&bundle_of_[i]);
    __builtin_prefetch(&next_[i]);
    __builtin_prefetch(&prev_[i]);
  }
  void prefetch_bundle(int id) const {
    const int b = bundle_of_[static_cast<std::size_t>(id)];
    if (b < 0) return;
    const auto* r = &bundle_[static_cast<std::size_t>(b)];
    __builtin_prefetch(r, 1);
    __builtin_prefetch(reinterpret_cast<const char*>(r) + sizeof(Bundle) - 1, 1);  // may span two lines
  }
  // The capacities given to the next run differ from the last run's: it fills everything anew.
  void capacities_changed() { full_ = true; }
  bool next_run_full() const { return full_; }

  // Max-min rates (bytes/ns for capacity in bytes/ns) of every member. Ties and rounding depend
  // only on the sequence of calls.
  void run(const std::vector<double>& capacity);
  // A member's rate at the last run (0 before its first); how many members and bundles that run
  // filled (every one after a full run), and, after a run that was not full, the members whose rate
  // it changed (most of a re-fill after departures get their old rate back), bundle by bundle in
  // the order it froze them. A full run lists none (changes_listed() is false): it re-fills every
  // member, and a caller that reads every member's rate in its own order (bundle_rate) reads
  // them in one pass instead of following the bundles' lists of flows.
  double rate(int id) const {
    const int b = bundle_of_[static_cast<std::size_t>(id)];
    return b < 0 ? 0.0 : bundle_[static_cast<std::size_t>(b)].rate;
  }
  bool changes_listed() const { return changes_listed_; }
  // A member's bundle, valid while it is a member, and that bundle's rate at the last run (the
  // dense kept rates: 8 bytes read, not the record).
  int bundle(int id) const { return bundle_of_[static_cast<std::size_t>(id)]; }
  double bundle_rate(int bundle) const { return kept_rate_[static_cast<std::size_t>(bundle)]; }
  void prefetch_bundle_rate(int bundle) const { __builtin_prefetch(&kept_rate_[static_cast<std::size_t>(bundle)]); }
  std::size_t refilled() const { return refilled_; }
  std::size_t refilled_bundles() const { return refilled_bundles_; }
  const std::vector<int>& changed() const { return changed_; }
  // changed() in runs of one bundle: each run's end in changed() and the new rate of its flows (the
  // caller needs no lookup per flow).
  struct Run {
    std::size_t end;
    double rate;
  };
  const std::vector<Run>& changed_runs() const { return changed_runs_; }
  // The members that joined a bundle already present (a flow of a path that had flows) before
  // the last run (since the one before it): where that run kept the bundle's rate they are not in
  // changed(), yet have that rate now.
  const std::vector<int>& joined_bundles() const { return joined_before_run_; }

  // Links with members, and after run() the summed rate of each one's members.
  const std::vector<int>& busy_links() const { return busy_; }
  double link_rate(int link) const { return link_[static_cast<std::size_t>(link)].used; }

 private:
  static constexpr std::uint32_t kInline = 6;
  static constexpr std::size_t kMaxHops = 65535;
  struct Bundle {
    std::uint16_t hops = 0;
    std::uint16_t lost = 0;            // lost a flow since the last run (listed in lost_)
    std::uint32_t weight = 0;          // flows in it; 0: gone (a path taken again gets a new bundle)
    std::uint32_t slot = 0;            // its entry in its first link's bundle_at_ while not gone
    int first = -1;                    // its first flow (a freeze lists its flows: no other line read)
    double rate = 0.0;                 // per flow
    std::array<int, kInline> links{};  // the path when hops <= kInline, else its offset in long_
  };
  struct Link {
    double left = 0.0;          // capacity not yet given to frozen flows
    double used = 0.0;          // rate given to frozen flows (after a run: to every member)
    std::int64_t unfrozen = 0;  // flows, not bundles
    std::uint32_t version = 0;  // bumped whenever left / unfrozen change
    std::uint32_t touched = 0;  // the run that last set it up
  };
  std::span<const int> path(const Bundle& b) const;
  static std::uint64_t key(std::span<const int> path);
  bool same_path(const Bundle& b, std::span<const int> path) const;
  void compact(std::size_t link);
  void open(int bundle, const std::vector<double>& capacity);
  static double share(const Link& k);
  // A link's member: its bundle, and behind the link's front (below) the bundle's kept rate when
  // it went there, rounded up to a float.
  struct Member {
    float high = 0.0F;
    int bundle = -1;
  };
  static int bundle_in(int b) { return b; }
  static int bundle_in(const Member& m) { return m.bundle; }
  template <class List>
  void freeze(double share, const List& members);
  template <class Lists>
  void by_rounds(const Lists& lists);
  template <class Lists>
  void by_heap(const Lists& lists);
  void open_affected(const std::vector<double>& capacity);
  template <class Reach>
  void open_on(int link, double level, const std::vector<double>& capacity, const Reach& reach);

  std::vector<Bundle> bundle_;
  // Per link, path -> its bundle while not empty, for the paths that start on the link: a
  // collective's flows start source by source, so one source's flows look up a few small tables
  // that stay in cache instead of one table of every bundle (a miss to memory per flow).
  std::vector<BundleIndex> bundle_at_;
  std::vector<int> bundle_of_;           // by flow id (-1: never joined, -2: left)
  std::vector<int> last_, next_, prev_;  // per bundle its last flow; per flow the next / previous in its bundle
  std::vector<int> long_;                // paths of more than kInline links, back to back
  std::vector<Link> link_;
  std::vector<std::vector<Member>> members_;  // per link: its bundles; may hold gone ones
  std::vector<std::vector<int>> opened_on_;   // per link: bundles a run after removals re-fills
  std::vector<int> live_, dead_;              // per link: bundles, gone bundles not yet compacted
  std::vector<std::int64_t> flows_on_;        // per link: flows
  std::vector<int> busy_;                     // links with live_ > 0, and each one's position there
  std::vector<int> busy_at_;

  // Per bundle: its rate while it is kept from the last run, NaN while this run fills it, -inf
  // once gone. Passes over a link's members read these 8 bytes, not the 48-byte records.
  std::vector<double> kept_rate_;
  std::size_t first_live_ = 0;            // every bundle before it is gone
  std::vector<int> lost_;                 // bundles that lost a flow since the last run
  std::vector<std::uint32_t> link_seen_;  // per link: the run whose search reached it last
  std::vector<int> reached_;              // links the search reached
  // Per link, while split_, its members split by the searches that reached it since its list last
  // changed: the first front_ were open or at or above a search's level, the others (behind)
  // below it, with highs (Member) of at most behind_max_. Not split: every member in front.
  std::vector<char> split_;
  std::vector<double> behind_max_;
  std::vector<std::size_t> front_;
  bool full_ = true;  // the next run must fill everything
  bool changes_listed_ = true;
  std::size_t refilled_ = 0, refilled_bundles_ = 0;
  std::vector<int> changed_;
  std::vector<Run> changed_runs_;
  std::vector<int> joined_, joined_before_run_;  // see joined_bundles(): since the last run, and before it
  std::vector<int> touched_;                     // links set up for this run
  std::vector<int> live_links_;                  // of which still to settle
  std::uint32_t runs_ = 0;

  using Entry = std::tuple<double, int, std::uint32_t>;  // share, link, version
  std::vector<Entry> heap_;
};

}  // namespace chorus::sim::flow
