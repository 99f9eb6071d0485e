#include "sim/flow/water_filler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>

#include "core/fnv1a.h"

namespace chorus::sim::flow {
namespace {
constexpr std::size_t kAhead = 24;  // members whose records are fetched ahead (8, 16 and 32: slower)
// Members whose kept rates are fetched ahead: a scan skips most members after reading only that,
// so it runs further ahead to keep enough misses in flight.
constexpr std::size_t kScanAhead = 48;
constexpr double kGone = -std::numeric_limits<double>::infinity();  // kept_rate_ of a gone bundle
constexpr double kOpen = std::numeric_limits<double>::quiet_NaN();  // and of one this run fills

// A kept rate rounded up to a float: a member's high behind its link's front (no smaller than
// the rate, so a search never passes over a member at its level).
float rounded_up(double rate) {
  float f = static_cast<float>(rate);
  if (static_cast<double>(f) < rate) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}
}  // namespace

WaterFiller::WaterFiller(std::size_t links)
    : bundle_at_(links),
      link_(links),
      members_(links),
      opened_on_(links),
      live_(links, 0),
      dead_(links, 0),
      flows_on_(links, 0),
      busy_at_(links, -1),
      link_seen_(links, 0),
      split_(links, 0),
      behind_max_(links, kGone),
      front_(links, 0) {
  static_assert(sizeof(Bundle) == 48, "the header promises one 48-byte record per bundle");
}

std::span<const int> WaterFiller::path(const Bundle& b) const {
  if (b.hops <= kInline) return {b.links.data(), b.hops};
  std::size_t at = 0;
  std::memcpy(&at, b.links.data(), sizeof at);
  return {long_.data() + at, b.hops};
}

std::uint64_t WaterFiller::key(std::span<const int> path) {
  Fnv1a h;
  for (int l : path) h.word(static_cast<std::uint32_t>(l));
  return h.digest();
}

bool WaterFiller::same_path(const Bundle& b, std::span<const int> path) const {
  const auto mine = this->path(b);
  return std::equal(mine.begin(), mine.end(), path.begin(), path.end());
}

void WaterFiller::reserve(std::size_t ids) {
  if (ids <= bundle_of_.size()) return;
  bundle_of_.resize(ids, -1);
  next_.resize(ids, -1);
  prev_.resize(ids, -1);
}

void WaterFiller::add(int id, std::span<const int> path) {
  if (id < 0 || path.empty()) throw std::logic_error("WaterFiller::add: negative id or empty path");
  if (path.size() > kMaxHops) throw std::logic_error("WaterFiller::add: path of more than 65,535 links");
  for (int li : path)
    if (li < 0 || static_cast<std::size_t>(li) >= link_.size())
      throw std::logic_error("WaterFiller::add: link out of range");
  const auto i = static_cast<std::size_t>(id);
  if (i >= bundle_of_.size()) reserve(std::max(i + 1, bundle_of_.size() + bundle_of_.size() / 2));
  if (bundle_of_[i] >= 0) throw std::logic_error("WaterFiller::add: id already a member");
  const std::uint64_t hash = key(path);
  auto& index = bundle_at_[static_cast<std::size_t>(path.front())];
  int b = index.find(hash, [&](int c) { return same_path(bundle_[static_cast<std::size_t>(c)], path); });
  const bool created = b < 0;
  if (created) {
    b = static_cast<int>(bundle_.size());
    auto& r = bundle_.emplace_back();
    r.slot =
        index.insert(hash, b, [&](int c, std::uint32_t slot) { bundle_[static_cast<std::size_t>(c)].slot = slot; });
    last_.push_back(-1);
    kept_rate_.push_back(0.0);  // filled by the full run its arrival causes
    r.hops = static_cast<std::uint16_t>(path.size());
    if (path.size() <= kInline) {
      std::copy(path.begin(), path.end(), r.links.begin());
    } else {
      const std::size_t at = long_.size();
      static_assert(sizeof at <= sizeof r.links);
      std::memcpy(r.links.data(), &at, sizeof at);
      long_.insert(long_.end(), path.begin(), path.end());
    }
  }
  auto& r = bundle_[static_cast<std::size_t>(b)];
  ++r.weight;
  bundle_of_[i] = b;
  if (!created) joined_.push_back(id);
  const int tail = last_[static_cast<std::size_t>(b)];  // flows in order of joining
  prev_[i] = tail;
  next_[i] = -1;
  if (tail >= 0)
    next_[static_cast<std::size_t>(tail)] = id;
  else
    r.first = id;
  last_[static_cast<std::size_t>(b)] = id;
  for (int li : path) {
    const auto l = static_cast<std::size_t>(li);
    ++flows_on_[l];
    if (!created) continue;
    members_[l].push_back({0.0F, b});
    split_[l] = 0;
    if (live_[l]++ == 0) {
      busy_at_[l] = static_cast<int>(busy_.size());
      busy_.push_back(li);
      link_[l].used = 0.0;
    }
  }
  full_ = true;
}

void WaterFiller::remove(int id) {
  const auto i = static_cast<std::size_t>(id);
  if (i >= bundle_of_.size() || bundle_of_[i] < 0) throw std::logic_error("WaterFiller::remove: not a member");
  const int b = bundle_of_[i];
  auto& r = bundle_[static_cast<std::size_t>(b)];
  bundle_of_[i] = -2;  // gone (it may join again)
  if (prev_[i] >= 0)
    next_[static_cast<std::size_t>(prev_[i])] = next_[i];
  else
    r.first = next_[i];
  if (next_[i] >= 0)
    prev_[static_cast<std::size_t>(next_[i])] = prev_[i];
  else
    last_[static_cast<std::size_t>(b)] = prev_[i];
  if (!r.lost) {  // the next run re-fills from it
    r.lost = 1;
    lost_.push_back(b);
  }
  const bool empty = --r.weight == 0;
  if (empty) {
    kept_rate_[static_cast<std::size_t>(b)] = kGone;
    bundle_at_[static_cast<std::size_t>(path(r).front())].erase_at(r.slot);
  }
  for (int li : path(r)) {
    const auto l = static_cast<std::size_t>(li);
    link_[l].used -= r.rate;
    --flows_on_[l];
    if (!empty) continue;
    if (--live_[l] == 0) {
      members_[l].clear();
      dead_[l] = 0;
      split_[l] = 0;
      const int at = busy_at_[l];
      busy_[static_cast<std::size_t>(at)] = busy_.back();
      busy_at_[static_cast<std::size_t>(busy_.back())] = at;
      busy_.pop_back();
      busy_at_[l] = -1;
      link_[l].used = 0.0;
    } else if (++dead_[l] > live_[l] + 8) {
      compact(l);
    }
  }
}

void WaterFiller::compact(std::size_t link) {
  auto& m = members_[link];
  // A gone bundle's kept rate says so: 8 dense bytes, not its record.
  m.erase(std::remove_if(m.begin(), m.end(),
                         [&](const Member& e) { return kept_rate_[static_cast<std::size_t>(e.bundle)] == kGone; }),
          m.end());
  dead_[link] = 0;
  split_[link] = 0;
}

// A bundle kept from the last run joins this one's filling: its old rate goes back to its links.
void WaterFiller::open(int bundle, const std::vector<double>& capacity) {
  auto& r = bundle_[static_cast<std::size_t>(bundle)];
  kept_rate_[static_cast<std::size_t>(bundle)] = kOpen;
  const double w = r.weight;
  for (int mi : path(r)) {
    auto& q = link_[static_cast<std::size_t>(mi)];
    if (q.touched != runs_) {
      q.touched = runs_;
      q.left = capacity[static_cast<std::size_t>(mi)] - q.used;
      q.unfrozen = 0;
      touched_.push_back(mi);
    }
    q.left += r.rate * w;
    q.used -= r.rate * w;
    q.unfrozen += r.weight;
    opened_on_[static_cast<std::size_t>(mi)].push_back(bundle);
  }
}

double WaterFiller::share(const Link& k) { return std::max(0.0, k.left) / static_cast<double>(k.unfrozen); }

// A link is a bottleneck at `share`: its unfrozen bundles (among `members`, its list) get it per
// flow and leave the other links of their paths.
template <class List>
void WaterFiller::freeze(double share, const List& members) {
  const std::size_t n = members.size();
  for (std::size_t j = 0; j < n; ++j) {
    // The records are scattered: fetch a few members ahead (most of a run's time is these misses).
    // Three stages: the kept rates furthest ahead, then the records and first flows, then the
    // first flows' links to the next (the flows of a bundle are listed for changed_).
    if (j + kScanAhead < n)
      __builtin_prefetch(&kept_rate_[static_cast<std::size_t>(bundle_in(members[j + kScanAhead]))]);
    if (j + kAhead < n) {
      const auto ahead = static_cast<std::size_t>(bundle_in(members[j + kAhead]));
      if (std::isnan(kept_rate_[ahead])) {
        __builtin_prefetch(&bundle_[ahead]);
        __builtin_prefetch(reinterpret_cast<const char*>(&bundle_[ahead]) + sizeof(Bundle) - 1);  // may span two lines
      }
    }
    if (changes_listed_ && j + kAhead / 2 < n) {
      const auto ahead = static_cast<std::size_t>(bundle_in(members[j + kAhead / 2]));
      if (std::isnan(kept_rate_[ahead])) {
        const int f = bundle_[ahead].first;
        if (f >= 0) __builtin_prefetch(&next_[static_cast<std::size_t>(f)]);
      }
    }
    const int b = bundle_in(members[j]);
    if (!std::isnan(kept_rate_[static_cast<std::size_t>(b)])) continue;  // kept, frozen in this run, or gone
    auto& r = bundle_[static_cast<std::size_t>(b)];
    if (changes_listed_ && r.rate != share) {
      for (int f = r.first; f >= 0; f = next_[static_cast<std::size_t>(f)]) changed_.push_back(f);
      changed_runs_.push_back({changed_.size(), share});
    }
    r.rate = share;
    kept_rate_[static_cast<std::size_t>(b)] = share;
    ++refilled_bundles_;
    refilled_ += r.weight;
    const double given = share * r.weight;
    for (int mi : path(r)) {
      auto& q = link_[static_cast<std::size_t>(mi)];
      q.left -= given;
      q.used += given;
      q.unfrozen -= r.weight;
      ++q.version;
    }
  }
}

// Settles the smallest share level by level, scanning the links left, while the scans cost less
// than a heap would over them all (L log L): few distinct levels (circuits of equal capacity,
// links without capacity) settle in a few passes. Leaves live_links_ holding the links still to settle.
template <class Lists>
void WaterFiller::by_rounds(const Lists& lists) {
  live_links_.clear();
  for (int li : touched_)
    if (link_[static_cast<std::size_t>(li)].unfrozen > 0) live_links_.push_back(li);
  const double n = static_cast<double>(live_links_.size());
  const double budget = n * std::log2(n + 2.0);
  double spent = 0.0;
  while (!live_links_.empty()) {
    spent += static_cast<double>(live_links_.size());
    if (spent > budget) return;
    double lowest = std::numeric_limits<double>::infinity();
    std::size_t kept = 0;
    for (int li : live_links_) {
      const auto& k = link_[static_cast<std::size_t>(li)];
      if (k.unfrozen == 0) continue;
      live_links_[kept++] = li;
      lowest = std::min(lowest, share(k));
    }
    live_links_.resize(kept);
    for (int li : live_links_) {
      const auto& k = link_[static_cast<std::size_t>(li)];
      if (k.unfrozen == 0) continue;
      const double s = share(k);
      if (s <= lowest) freeze(s, lists[static_cast<std::size_t>(li)]);
    }
  }
}

// Settles the links by_rounds left, smallest share first, by a min-heap whose stale entries are
// re-keyed when they surface.
template <class Lists>
void WaterFiller::by_heap(const Lists& lists) {
  heap_.clear();
  for (int li : live_links_) {
    const auto& k = link_[static_cast<std::size_t>(li)];
    if (k.unfrozen > 0) heap_.emplace_back(share(k), li, k.version);
  }
  const std::greater<> later;
  std::make_heap(heap_.begin(), heap_.end(), later);
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const auto [s, li, version] = heap_.back();
    heap_.pop_back();
    const auto& k = link_[static_cast<std::size_t>(li)];
    if (k.unfrozen == 0) continue;
    if (version != k.version) {  // its share has grown since: back in at the current one
      heap_.emplace_back(share(k), li, k.version);
      std::push_heap(heap_.begin(), heap_.end(), later);
      continue;
    }
    freeze(s, lists[static_cast<std::size_t>(li)]);  // the smallest share of all
  }
}

// After removals only: the bundles whose rate can change. Let `level` be the smallest rate of a
// bundle that lost flows. Bundles below it keep their rates (the header). The bundles at or above
// it, over the links' capacities minus the rates below it, are a filling of their own, and it
// splits into the connected parts of the graph of those bundles and their links: a part that
// holds no link that lost flows has the same capacities and bundles as before and fills as before.
// A part reached from a lost bundle at a higher level is itself such a filling, whose own lowest
// lost bundle sets its level. So each lost bundle, lowest rate first, opens what it reaches
// through bundles at or above its own rate; a link reached before was searched at a level no
// higher, so it is not searched again.
void WaterFiller::open_affected(const std::vector<double>& capacity) {
  std::sort(lost_.begin(), lost_.end(), [&](int a, int b) {
    return bundle_[static_cast<std::size_t>(a)].rate < bundle_[static_cast<std::size_t>(b)].rate;
  });
  reached_.clear();
  const auto reach = [&](int li) {
    auto& seen = link_seen_[static_cast<std::size_t>(li)];
    if (seen == runs_) return;
    seen = runs_;
    reached_.push_back(li);
  };
  for (int lost : lost_) {
    const auto& r = bundle_[static_cast<std::size_t>(lost)];
    std::size_t q = reached_.size();
    for (int li : path(r)) reach(li);
    for (; q < reached_.size(); ++q) open_on(reached_[q], r.rate, capacity, reach);
  }
}

// Opens the members of `link` at or above `level` and reaches their links. A member behind the
// link's front had its kept rate (at most its high) when it went there, and none has been filled
// since: a bundle filled again was opened, and its opening reached this link in the same run at a
// level no higher than its rate, where this search (or an earlier one of the run, at a level no
// higher still) took it from behind. So at a level above behind_max_ only the front can hold one
// to open; else the members behind whose high is at or above the level come to the front first,
// found from the highs alone (one pass over the list, no record read). The front's members below
// the level, or gone, go behind.
template <class Reach>
void WaterFiller::open_on(int link, double level, const std::vector<double>& capacity, const Reach& reach) {
  const auto l = static_cast<std::size_t>(link);
  auto& members = members_[l];
  const std::size_t n = members.size();
  std::size_t front = n;  // not split: every member in front
  if (split_[l]) {
    front = front_[l];
    if (!(level > behind_max_[l])) {  // one behind may be at the level: those whose high is come to the front
      double high = kGone;
      for (std::size_t j = front; j < n; ++j) {
        const double h = members[j].high;
        if (h >= level)
          std::swap(members[j], members[front++]);
        else
          high = std::max(high, h);
      }
      behind_max_[l] = high;
    }
  } else {
    split_[l] = 1;
    behind_max_[l] = kGone;
  }
  // The scan reads the kept rates kScanAhead ahead; the first ones are fetched before it starts
  // (most fronts are shorter than that).
  for (std::size_t j = front; j-- > 0 && j + kScanAhead >= front;)
    __builtin_prefetch(&kept_rate_[static_cast<std::size_t>(members[j].bundle)]);
  for (std::size_t j = front; j-- > 0;) {
    if (j >= kScanAhead) __builtin_prefetch(&kept_rate_[static_cast<std::size_t>(members[j - kScanAhead].bundle)]);
    const int b = members[j].bundle;
    const double kept = kept_rate_[static_cast<std::size_t>(b)];
    if (kept >= level) {
      open(b, capacity);
      for (int li : path(bundle_[static_cast<std::size_t>(b)])) reach(li);
    } else if (kept == kGone) {  // leaves the list: the front's last takes its place, the list's last that one's
      members[j] = members[front - 1];
      members[front - 1] = members.back();
      members.pop_back();
      --front;
      --dead_[l];
    } else if (!std::isnan(kept)) {  // below the level: behind, in the front's last place
      members[j].high = rounded_up(kept);
      behind_max_[l] = std::max(behind_max_[l], static_cast<double>(members[j].high));
      std::swap(members[j], members[--front]);
    }
  }
  front_[l] = front;
}

void WaterFiller::run(const std::vector<double>& capacity) {
  if (runs_ + 2 >= std::numeric_limits<std::uint32_t>::max()) {  // after 4 billion runs: renumber
    for (auto& k : link_) k.touched = 0;
    std::fill(link_seen_.begin(), link_seen_.end(), 0);
    runs_ = 0;
  }
  ++runs_;
  touched_.clear();
  changed_.clear();
  changed_runs_.clear();
  joined_before_run_.swap(joined_);
  joined_.clear();
  refilled_ = 0;
  refilled_bundles_ = 0;
  const bool full = full_;
  changes_listed_ = !full;
  if (full) {
    for (int li : busy_) {
      auto& k = link_[static_cast<std::size_t>(li)];
      k.left = capacity[static_cast<std::size_t>(li)];
      k.used = 0.0;
      k.unfrozen = flows_on_[static_cast<std::size_t>(li)];
      k.touched = runs_;
      touched_.push_back(li);
    }
    for (int li : busy_) split_[static_cast<std::size_t>(li)] = 0;
    // Every bundle not gone is open: one pass in order of creation (those on the busy links' member
    // lists, without reading the lists), from the first one not gone.
    while (first_live_ < kept_rate_.size() && kept_rate_[first_live_] == kGone) ++first_live_;
    for (std::size_t b = first_live_; b < kept_rate_.size(); ++b)
      if (kept_rate_[b] != kGone) kept_rate_[b] = kOpen;
  } else if (!lost_.empty()) {
    open_affected(capacity);
  }
  for (int li : touched_) ++link_[static_cast<std::size_t>(li)].version;
  if (full) {
    by_rounds(members_);
    by_heap(members_);
  } else {  // after removals only, the bundles opened on a link
    by_rounds(opened_on_);
    by_heap(opened_on_);
  }
  for (int li : touched_) opened_on_[static_cast<std::size_t>(li)].clear();
  for (int b : lost_) bundle_[static_cast<std::size_t>(b)].lost = 0;
  lost_.clear();
  full_ = false;
}

}  // namespace chorus::sim::flow
