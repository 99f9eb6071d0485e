#include "sim/flow/water_filler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>

namespace chorus::sim::flow {
namespace {
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kAhead = 8;  // members whose records are fetched ahead
}  // namespace

WaterFiller::WaterFiller(std::size_t links)
    : link_(links), members_(links), opened_on_(links), live_(links, 0), dead_(links, 0), busy_at_(links, -1), first_removed_(kNone) {
  static_assert(sizeof(Record) == 48, "the header promises one 48-byte record per flow");
}

std::span<const int> WaterFiller::path(const Record& r) const {
  if (r.hops <= kInline) return {r.links.data(), r.hops};
  std::size_t at = 0;
  std::memcpy(&at, r.links.data(), sizeof at);
  return {long_.data() + at, r.hops};
}

void WaterFiller::add(int id, std::span<const int> path) {
  if (id < 0 || path.empty()) throw std::logic_error("WaterFiller::add: negative id or empty path");
  for (int li : path)
    if (li < 0 || static_cast<std::size_t>(li) >= link_.size()) throw std::logic_error("WaterFiller::add: link out of range");
  const auto i = static_cast<std::size_t>(id);
  if (i >= flow_.size()) flow_.resize(std::max(i + 1, flow_.size() + flow_.size() / 2));
  auto& r = flow_[i];
  if (r.hops != 0) throw std::logic_error("WaterFiller::add: id added twice");
  r.hops = static_cast<std::uint32_t>(path.size());
  if (path.size() <= kInline) {
    std::copy(path.begin(), path.end(), r.links.begin());
  } else {
    const std::size_t at = long_.size();
    static_assert(sizeof at <= sizeof r.links);
    std::memcpy(r.links.data(), &at, sizeof at);
    long_.insert(long_.end(), path.begin(), path.end());
  }
  for (int li : path) {
    const auto l = static_cast<std::size_t>(li);
    members_[l].push_back(id);
    if (live_[l]++ == 0) {
      busy_at_[l] = static_cast<int>(busy_.size());
      busy_.push_back(li);
      link_[l].used = 0.0;
    }
  }
  added_.push_back(id);
  full_ = true;
}

void WaterFiller::remove(int id) {
  const auto i = static_cast<std::size_t>(id);
  if (i >= flow_.size() || flow_[i].hops == 0 || flow_[i].gone) throw std::logic_error("WaterFiller::remove: not a member");
  auto& r = flow_[i];
  r.gone = 1;
  r.open_in = 0;
  if (r.order_at < order_.size() && order_[r.order_at] == id) first_removed_ = std::min<std::size_t>(first_removed_, r.order_at);
  for (int li : path(r)) {
    const auto l = static_cast<std::size_t>(li);
    link_[l].used -= r.rate;
    if (--live_[l] == 0) {
      members_[l].clear();
      dead_[l] = 0;
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
  m.erase(std::remove_if(m.begin(), m.end(), [&](int id) { return flow_[static_cast<std::size_t>(id)].gone != 0; }), m.end());
  dead_[link] = 0;
}

// A flow kept from the last run joins this one's filling: its old rate goes back to its links.
void WaterFiller::open(int id, const std::vector<double>& capacity) {
  auto& r = flow_[static_cast<std::size_t>(id)];
  r.open_in = runs_;
  for (int mi : path(r)) {
    auto& q = link_[static_cast<std::size_t>(mi)];
    if (q.touched != runs_) {
      q.touched = runs_;
      q.left = capacity[static_cast<std::size_t>(mi)] - q.used;
      q.unfrozen = 0;
      touched_.push_back(mi);
    }
    q.left += r.rate;
    q.used -= r.rate;
    ++q.unfrozen;
    opened_on_[static_cast<std::size_t>(mi)].push_back(id);
  }
}

double WaterFiller::share(const Link& k) { return std::max(0.0, k.left) / k.unfrozen; }

// A link is a bottleneck at `share`: its unfrozen flows (among `members`, its list) get it and
// leave the other links of their paths.
void WaterFiller::freeze(double share, const std::vector<int>& members) {
  const std::size_t n = members.size();
  for (std::size_t j = 0; j < n; ++j) {
    // The records are scattered: fetch a few members ahead (most of a run's time is these misses).
    if (j + kAhead < n) __builtin_prefetch(&flow_[static_cast<std::size_t>(members[j + kAhead])]);
    const int id = members[j];
    auto& r = flow_[static_cast<std::size_t>(id)];
    if (r.open_in != runs_) continue;  // kept from the last run, frozen in this one, or removed
    r.open_in = 0;
    if (r.rate != share) changed_.push_back(id);
    r.rate = share;
    r.order_at = static_cast<std::uint32_t>(order_.size());
    order_.push_back(id);
    for (int mi : path(r)) {
      auto& q = link_[static_cast<std::size_t>(mi)];
      q.left -= share;
      q.used += share;
      --q.unfrozen;
      ++q.version;
    }
  }
}

// Settles the smallest share level by level, scanning the links left, while the scans cost less
// than a heap would over them all (L log L): few distinct levels (circuits of equal capacity,
// links without capacity) settle in a few passes. Leaves live_links_ holding the links still to settle.
void WaterFiller::by_rounds(const std::vector<std::vector<int>>& lists) {
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
void WaterFiller::by_heap(const std::vector<std::vector<int>>& lists) {
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

void WaterFiller::run(const std::vector<double>& capacity) {
  if (runs_ + 1 == std::numeric_limits<std::uint32_t>::max()) {  // after 4 billion runs: renumber
    for (auto& r : flow_) r.open_in = 0;
    for (auto& k : link_) k.touched = 0;
    runs_ = 0;
  }
  ++runs_;
  touched_.clear();
  changed_.clear();
  std::size_t from = order_.size();
  const bool full = full_;
  if (full) {
    from = 0;
    for (int li : busy_) {
      auto& k = link_[static_cast<std::size_t>(li)];
      k.left = capacity[static_cast<std::size_t>(li)];
      k.used = 0.0;
      k.unfrozen = live_[static_cast<std::size_t>(li)];
      k.touched = runs_;
      touched_.push_back(li);
    }
    for (int id : order_)
      if (!flow_[static_cast<std::size_t>(id)].gone) flow_[static_cast<std::size_t>(id)].open_in = runs_;
    for (int id : added_)
      if (!flow_[static_cast<std::size_t>(id)].gone) flow_[static_cast<std::size_t>(id)].open_in = runs_;
    order_.clear();
  } else if (first_removed_ < order_.size()) {
    // Back to the start of the bottleneck that froze the first removed flow (its flows share its rate).
    const double level = flow_[static_cast<std::size_t>(order_[first_removed_])].rate;
    from = first_removed_;
    while (from > 0 && flow_[static_cast<std::size_t>(order_[from - 1])].rate >= level) --from;
    for (std::size_t p = from; p < order_.size(); ++p) {
      if (p + kAhead < order_.size()) __builtin_prefetch(&flow_[static_cast<std::size_t>(order_[p + kAhead])]);
      if (!flow_[static_cast<std::size_t>(order_[p])].gone) open(order_[p], capacity);
    }
    order_.resize(from);
  }
  for (int li : touched_) ++link_[static_cast<std::size_t>(li)].version;
  const auto& lists = full ? members_ : opened_on_;  // after removals only, the flows opened on a link
  by_rounds(lists);
  by_heap(lists);
  refilled_ = order_.size() - from;
  for (int li : touched_) opened_on_[static_cast<std::size_t>(li)].clear();
  first_removed_ = kNone;
  added_.clear();
  full_ = false;
}

}  // namespace chorus::sim::flow
