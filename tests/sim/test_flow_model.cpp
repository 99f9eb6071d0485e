// The flow-level model: max-min fair sharing by progressive filling. Expected values by hand.
// Units: 8 Gbit/s = 1 byte/ns, so with 8 Gbps links times in ns equal bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/rng.h"
#include "net/graph/fabrics.h"
#include "sim/flow/flow_model.h"
#include "sim/flow/traffic.h"
#include "sim/flow/bundle_index.h"
#include "sim/flow/water_filler.h"

using namespace chorus::net;
using namespace chorus::sim::flow;

namespace {
// A line of `hops` links 0->1->2..., each 8 Gbps (1 byte/ns), with the given latency.
GraphNetwork line(int hops, double latency_ns) {
  GraphNetwork g;
  g.name = "line";
  g.servers = hops + 1;
  for (int i = 0; i < hops; ++i) g.add_link(i, i + 1, 8.0, latency_ns);
  return g;
}
Flow flow(Path p, double bytes, double start = 0.0) {
  Flow f;
  f.path = std::move(p);
  f.bytes = bytes;
  f.start_ns = start;
  return f;
}
}  // namespace

TEST(FlowModel, TwoFlowsOnOneLinkGetHalfEach) {
  // 1000 bytes each at 0.5 byte/ns -> last byte at 2000 ns; + 1000 ns latency = 3000 ns.
  const auto g = line(1, 1000.0);
  const auto r = simulate_flows(g, {flow({0}, 1000), flow({0}, 1000)});
  EXPECT_DOUBLE_EQ(r.send_done_ns[0], 2000.0);
  EXPECT_DOUBLE_EQ(r.finish_ns[0], 3000.0);
  EXPECT_DOUBLE_EQ(r.finish_ns[1], 3000.0);
  EXPECT_DOUBLE_EQ(r.link_bytes[0], 2000.0);
  EXPECT_DOUBLE_EQ(r.link_busy_ns[0], 2000.0);
}

TEST(FlowModel, ParkingLotGivesHalfToEveryFlow) {
  // Long flow over links 0 and 1, one short flow per link: each link has 2 flows -> 1/2 each.
  // 1000 bytes at 0.5 -> every last byte at 2000 ns (latency 0).
  const auto g = line(2, 0.0);
  const auto r = simulate_flows(g, {flow({0, 1}, 1000), flow({0}, 1000), flow({1}, 1000)});
  for (int f = 0; f < 3; ++f) EXPECT_DOUBLE_EQ(r.finish_ns[static_cast<std::size_t>(f)], 2000.0);
  std::vector<const Path*> paths;
  const Path a{0, 1}, b{0}, c{1};
  paths = {&a, &b, &c};
  const auto rates = max_min_rates({1.0, 1.0}, paths);
  for (double x : rates) EXPECT_DOUBLE_EQ(x, 0.5);
}

TEST(FlowModel, DepartureFreesBandwidth) {
  // A 1000 B and B 3000 B share one link: 0.5 each until A is done at 2000 ns (B has sent 1000);
  // then B alone at 1 byte/ns sends its 2000 left by 4000 ns. Reallocations: start, A leaves,
  // B leaves = 3.
  const auto g = line(1, 0.0);
  const auto r = simulate_flows(g, {flow({0}, 1000), flow({0}, 3000)});
  EXPECT_DOUBLE_EQ(r.finish_ns[0], 2000.0);
  EXPECT_DOUBLE_EQ(r.finish_ns[1], 4000.0);
  EXPECT_EQ(r.reallocations, 3);
}

TEST(FlowModel, LaterArrivalSlowsTheFirst) {
  // A 2000 B starts at 0 alone (1 B/ns); B 500 B arrives at 1000 ns: A has 1000 left, both 0.5;
  // B done at 2000 ns, A has 500 left -> alone -> 2500 ns.
  const auto g = line(1, 0.0);
  const auto r = simulate_flows(g, {flow({0}, 2000), flow({0}, 500, 1000.0)});
  EXPECT_DOUBLE_EQ(r.finish_ns[1], 2000.0);
  EXPECT_DOUBLE_EQ(r.finish_ns[0], 2500.0);
}

TEST(FlowModel, AFlowJoiningABundleWhoseRateStaysGetsThatRate) {
  // A (1000 B on link 0) and B (500 B on links 0, 1) share link 0 (1 B/ns): 0.5 each. B's last
  // byte at 1000 ns; at that instant C (100 B on link 0: A's path) starts. Link 0 is again shared
  // by two flows, A and C, at 0.5 each: A's rate does not change, and C must get it too. C sends
  // its 100 B by 1200 ns; A has 500 left at 1000 ns, sends 100 more by 1200 and its last 400
  // alone at 1 B/ns: 1600 ns.
  const auto g = line(2, 0.0);
  const auto r = simulate_flows(g, {flow({0}, 1000), flow({0, 1}, 500), flow({0}, 100, 1000.0)});
  EXPECT_DOUBLE_EQ(r.finish_ns[1], 1000.0);
  EXPECT_DOUBLE_EQ(r.finish_ns[2], 1200.0);
  EXPECT_DOUBLE_EQ(r.finish_ns[0], 1600.0);
}

TEST(FlowModel, PerHopLatencyIsAdded) {
  // 1000 B over 2 hops at 1 B/ns: last byte at 1000 ns, + 2 x 1000 ns latency = 3000 ns.
  const auto g = line(2, 1000.0);
  const auto r = simulate_flows(g, {flow({0, 1}, 1000)});
  EXPECT_DOUBLE_EQ(r.finish_ns[0], 3000.0);
}

TEST(FlowModel, DependencyCycleIsAnInputError) {
  const auto g = line(1, 0.0);
  auto a = flow({0}, 10), b = flow({0}, 10);
  a.after = {1};
  b.after = {0};
  EXPECT_THROW(simulate_flows(g, {a, b}), chorus::InputError);
  EXPECT_THROW(simulate_flows(g, {flow({3}, 10)}), chorus::InputError);  // link out of range
}

TEST(FlowModel, RingAllReduceOnARing) {
  // Ring of n = 4 with links i -> i+1 of 8 Gbps (1 B/ns), latency L = 1000 ns, bytes = 4000:
  // 2(n-1) = 6 steps of 1000 B -> 6 x (1000 + 1000) = 12000 ns
  // = 2(n-1)/n * bytes/B + 2(n-1) L = 6/4 * 4000 + 6 * 1000.
  GraphNetwork g;
  g.servers = 4;
  for (int i = 0; i < 4; ++i) g.add_link(i, (i + 1) % 4, 8.0, 1000.0);
  Router router(g);
  std::vector<Flow> flows;
  const int last = ring_allreduce(router, {0, 1, 2, 3}, 4000.0, 0.0, flows);
  const auto r = simulate_flows(g, flows);
  EXPECT_DOUBLE_EQ(r.finish_ns[static_cast<std::size_t>(last)], 12000.0);
  EXPECT_DOUBLE_EQ(r.makespan_ns, 12000.0);
  // Traffic matrix: server 0 sends 6 chunks of 1000 B to server 1, nothing to server 3.
  const auto m = traffic_matrix(4, flows);
  EXPECT_DOUBLE_EQ(m[0][1], 6000.0);
  EXPECT_DOUBLE_EQ(m[0][3], 0.0);
  std::ostringstream csv;
  write_matrix_csv(csv, m);
  EXPECT_EQ(csv.str().substr(0, 14), "src,0,1,2,3\n0,");
}

namespace {
// The definition of max-min fairness: rates are feasible and every flow has a bottleneck link
// that is saturated and on which no flow has a larger rate.
void expect_max_min(const std::vector<double>& cap, const std::vector<Path>& paths, const std::vector<double>& rate,
                    const std::string& where) {
  const auto nl = cap.size();
  std::vector<double> load(nl, 0.0), top(nl, 0.0);
  for (std::size_t f = 0; f < paths.size(); ++f)
    for (int l : paths[f]) {
      load[static_cast<std::size_t>(l)] += rate[f];
      top[static_cast<std::size_t>(l)] = std::max(top[static_cast<std::size_t>(l)], rate[f]);
    }
  for (std::size_t l = 0; l < nl; ++l) EXPECT_LE(load[l], cap[l] + 1e-9) << where << " link " << l;
  for (std::size_t f = 0; f < paths.size(); ++f) {
    EXPECT_GT(rate[f], 0.0) << where;
    bool bottleneck = false;
    for (int l : paths[f]) {
      const auto lu = static_cast<std::size_t>(l);
      if (load[lu] >= cap[lu] - 1e-9 && rate[f] >= top[lu] - 1e-9) bottleneck = true;
    }
    EXPECT_TRUE(bottleneck) << where << " flow " << f;
  }
}
}  // namespace

TEST(FlowModel, MaxMinDefinitionHoldsOnRandomInstances) {
  chorus::Rng rng(42);
  for (int trial = 0; trial < 300; ++trial) {
    const int nl = static_cast<int>(rng.uniform_int(1, 6));
    const int nflows = static_cast<int>(rng.uniform_int(1, 8));
    std::vector<double> cap(static_cast<std::size_t>(nl));
    for (auto& c : cap) c = rng.uniform(0.5, 4.0);
    std::vector<Path> owned(static_cast<std::size_t>(nflows));
    for (auto& p : owned) {
      for (int l = 0; l < nl; ++l)
        if (rng.uniform01() < 0.4) p.push_back(l);
      if (p.empty()) p.push_back(static_cast<int>(rng.uniform_int(0, nl - 1)));
    }
    std::vector<const Path*> paths;
    for (const auto& p : owned) paths.push_back(&p);
    expect_max_min(cap, owned, max_min_rates(cap, paths), "trial " + std::to_string(trial));
  }
}

TEST(WaterFiller, RemovalsRefillOnlyFromTheFirstBottleneckTheyTouch) {
  // Link 0 (1 B/ns) carries a and b, link 1 (10 B/ns) carries c and d, link 2 (10 B/ns) carries
  // e alone: a = b = 0.5 froze first, then c = d = 5, then e = 10. Removing c changes nothing
  // below c's level, and nothing on link 2, which no flow at or above that level connects to
  // link 1: d alone is filled again, to 10 (e keeps its 10 without a re-fill).
  WaterFiller w(3);
  const Path on0{0}, on1{1}, on2{2};
  w.add(0, on0);
  w.add(1, on0);
  w.add(2, on1);
  w.add(3, on1);
  w.add(4, on2);
  w.run({1.0, 10.0, 10.0});
  EXPECT_EQ(w.refilled(), 5u);
  EXPECT_FALSE(w.changes_listed());  // a full run: every member re-filled, none listed
  EXPECT_TRUE(w.changed().empty());
  EXPECT_DOUBLE_EQ(w.rate(0), 0.5);
  EXPECT_DOUBLE_EQ(w.rate(2), 5.0);
  EXPECT_DOUBLE_EQ(w.rate(4), 10.0);
  w.remove(2);
  w.run({1.0, 10.0, 10.0});
  EXPECT_EQ(w.refilled(), 1u);
  EXPECT_TRUE(w.changes_listed());
  EXPECT_EQ(w.changed(), std::vector<int>{3});
  EXPECT_DOUBLE_EQ(w.rate(3), 10.0);
  EXPECT_DOUBLE_EQ(w.rate(4), 10.0);
  EXPECT_DOUBLE_EQ(w.rate(0), 0.5);
  EXPECT_DOUBLE_EQ(w.link_rate(1), 10.0);
  EXPECT_DOUBLE_EQ(w.link_rate(0), 1.0);
}

TEST(WaterFiller, RemovalsRefillTheLinksConnectedToThemAboveTheirLevel) {
  // Link 0 (2 B/ns) carries a and a2 (path {0}) and b (path {0, 1}); link 1 (3 B/ns) carries b
  // and c; link 2 (1 B/ns) carries d. By hand: link 0's share 2/3 is the smallest (link 1: 3/2,
  // link 2: 1), so a = a2 = b = 2/3; then d = 1; then c = 3 - 2/3 = 7/3. Removing a2 (rate 2/3):
  // link 0 now gives a and b 1 each, so link 1 has 2 left for c. b carries the change from link 0
  // to link 1; nothing at or above 2/3 reaches link 2, so d is not filled again.
  WaterFiller w(3);
  const std::vector<double> cap{2.0, 3.0, 1.0};
  const Path on0{0}, on01{0, 1}, on1{1}, on2{2};
  w.add(0, on0);   // a
  w.add(1, on0);   // a2
  w.add(2, on01);  // b
  w.add(3, on1);   // c
  w.add(4, on2);   // d
  w.run(cap);
  EXPECT_DOUBLE_EQ(w.rate(0), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(w.rate(2), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(w.rate(3), 7.0 / 3.0);
  EXPECT_DOUBLE_EQ(w.rate(4), 1.0);
  w.remove(1);
  w.run(cap);
  EXPECT_EQ(w.refilled(), 3u);  // a, b and c
  EXPECT_EQ(w.refilled_bundles(), 3u);
  auto changed = w.changed();
  std::sort(changed.begin(), changed.end());
  EXPECT_EQ(changed, (std::vector<int>{0, 2, 3}));
  EXPECT_DOUBLE_EQ(w.rate(0), 1.0);
  EXPECT_DOUBLE_EQ(w.rate(2), 1.0);
  EXPECT_DOUBLE_EQ(w.rate(3), 2.0);
  EXPECT_DOUBLE_EQ(w.rate(4), 1.0);
  EXPECT_DOUBLE_EQ(w.link_rate(1), 3.0);
  EXPECT_DOUBLE_EQ(w.link_rate(2), 1.0);
}

namespace {
// changed_runs() splits changed() into consecutive runs, each with the rate the run's flows now have.
void expect_runs_cover_changed(const WaterFiller& w) {
  std::size_t from = 0;
  for (const auto& run : w.changed_runs()) {
    EXPECT_GT(run.end, from);  // no empty run
    for (std::size_t j = from; j < run.end && j < w.changed().size(); ++j) EXPECT_EQ(w.rate(w.changed()[j]), run.rate);
    from = run.end;
  }
  EXPECT_EQ(from, w.changed().size());
}
}  // namespace

TEST(WaterFiller, SparseFabricsAfterRemovalsMatchAFillFromScratch) {
  // Mostly one-link paths with a few longer ones, as on a direct-connect fabric: after every
  // batch of departures the kept and re-filled rates must equal a filling of the flows present
  // from scratch (an independent filler), and changed() must list exactly the flows whose rate
  // moved (of those present before).
  chorus::Rng rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    const int nl = static_cast<int>(rng.uniform_int(4, 24));
    std::vector<double> cap(static_cast<std::size_t>(nl));
    for (auto& c : cap) c = rng.uniform(0.5, 4.0);
    WaterFiller w(static_cast<std::size_t>(nl));
    std::vector<Path> path_of;
    std::vector<int> present;
    const auto join = [&](int count) {
      for (int k = 0; k < count; ++k) {
        Path p{static_cast<int>(rng.uniform_int(0, nl - 1))};
        if (rng.uniform01() < 0.2)
          for (int extra = static_cast<int>(rng.uniform_int(1, 3)); extra > 0; --extra) {
            const int l = static_cast<int>(rng.uniform_int(0, nl - 1));
            if (std::find(p.begin(), p.end(), l) == p.end()) p.push_back(l);
          }
        const int id = static_cast<int>(path_of.size());
        path_of.push_back(p);
        w.add(id, p);
        present.push_back(id);
      }
    };
    join(static_cast<int>(rng.uniform_int(10, 60)));
    w.run(cap);
    for (int op = 0; op < 30 && !present.empty(); ++op) {
      std::vector<double> before(path_of.size(), -1.0);
      for (int id : present) before[static_cast<std::size_t>(id)] = w.rate(id);
      const bool joins = rng.uniform01() < 0.15;
      if (joins) {
        join(static_cast<int>(rng.uniform_int(1, 5)));
      } else {
        const int leaving =
            static_cast<int>(rng.uniform_int(1, std::min<std::int64_t>(4, static_cast<std::int64_t>(present.size()))));
        for (int k = 0; k < leaving; ++k) {
          const auto at = static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(present.size()) - 1));
          w.remove(present[at]);
          present.erase(present.begin() + static_cast<std::ptrdiff_t>(at));
        }
      }
      w.run(cap);
      before.resize(path_of.size(), -1.0);  // newcomers had no rate
      std::vector<const Path*> paths;
      for (int id : present) paths.push_back(&path_of[static_cast<std::size_t>(id)]);
      const auto fresh = max_min_rates(cap, paths);
      std::vector<int> moved;
      for (std::size_t i = 0; i < present.size(); ++i) {
        const int id = present[i];
        EXPECT_NEAR(w.rate(id), fresh[i], 1e-9 * (1.0 + fresh[i])) << "trial " << trial << " op " << op;
        const double was = before[static_cast<std::size_t>(id)];
        if (was >= 0.0 && w.rate(id) != was) moved.push_back(id);
      }
      std::vector<int> changed;  // of the flows present before (a newcomer's first rate is its own)
      for (int id : w.changed())
        if (before[static_cast<std::size_t>(id)] >= 0.0) changed.push_back(id);
      std::sort(changed.begin(), changed.end());
      std::sort(moved.begin(), moved.end());
      EXPECT_EQ(w.changes_listed(), !joins) << "trial " << trial << " op " << op;  // joins: a full run
      if (!joins) {
        EXPECT_EQ(changed, moved) << "trial " << trial << " op " << op;
      }
      expect_runs_cover_changed(w);
    }
  }
}

TEST(WaterFiller, JoinsAndDeparturesTogetherMatchAFillFromScratch) {
  // Flows join and leave in the same runs, on paths of up to four links, sharing paths (bundles
  // that gain and lose flows at once): every run's rates must equal a filling from scratch (an
  // independent filler), and after departures alone changed() must list exactly the flows whose
  // rate moved.
  chorus::Rng rng(23);
  for (int trial = 0; trial < 60; ++trial) {
    const int nl = static_cast<int>(rng.uniform_int(3, 20));
    std::vector<double> cap(static_cast<std::size_t>(nl));
    for (auto& c : cap) c = rng.uniform(0.5, 4.0);
    WaterFiller w(static_cast<std::size_t>(nl));
    std::vector<Path> path_of, pool;
    for (int k = 0; k < 12; ++k) {  // few distinct paths: flows share them
      Path p{static_cast<int>(rng.uniform_int(0, nl - 1))};
      for (int extra = static_cast<int>(rng.uniform_int(0, 3)); extra > 0; --extra) {
        const int l = static_cast<int>(rng.uniform_int(0, nl - 1));
        if (std::find(p.begin(), p.end(), l) == p.end()) p.push_back(l);
      }
      pool.push_back(p);
    }
    std::vector<int> present;
    const auto join = [&](int count) {
      for (int k = 0; k < count; ++k) {
        const int id = static_cast<int>(path_of.size());
        path_of.push_back(pool[static_cast<std::size_t>(rng.uniform_int(0, 11))]);
        w.add(id, path_of.back());
        present.push_back(id);
      }
    };
    join(static_cast<int>(rng.uniform_int(5, 40)));
    w.run(cap);
    for (int op = 0; op < 40; ++op) {
      std::vector<double> before(path_of.size(), -1.0);
      for (int id : present) before[static_cast<std::size_t>(id)] = w.rate(id);
      const double u = rng.uniform01();
      if (u < 0.7 && !present.empty()) {  // departures (and, half the time, joins as well)
        const int leaving =
            static_cast<int>(rng.uniform_int(1, std::min<std::int64_t>(3, static_cast<std::int64_t>(present.size()))));
        for (int k = 0; k < leaving; ++k) {
          const auto at = static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(present.size()) - 1));
          w.remove(present[at]);
          present.erase(present.begin() + static_cast<std::ptrdiff_t>(at));
        }
      }
      if (u >= 0.35) join(static_cast<int>(rng.uniform_int(1, 3)));
      w.run(cap);
      before.resize(path_of.size(), -1.0);
      std::vector<const Path*> paths;
      for (int id : present) paths.push_back(&path_of[static_cast<std::size_t>(id)]);
      const auto fresh = max_min_rates(cap, paths);
      std::vector<int> moved;
      for (std::size_t i = 0; i < present.size(); ++i) {
        const int id = present[i];
        EXPECT_NEAR(w.rate(id), fresh[i], 1e-9 * (1.0 + fresh[i])) << "trial " << trial << " op " << op;
        const double was = before[static_cast<std::size_t>(id)];
        if (was >= 0.0 && w.rate(id) != was) moved.push_back(id);
      }
      // A run after joins is full and lists no changes; one after departures alone lists them.
      EXPECT_EQ(w.changes_listed(), u < 0.35) << "trial " << trial << " op " << op;
      std::vector<int> changed;
      for (int id : w.changed())
        if (before[static_cast<std::size_t>(id)] >= 0.0) changed.push_back(id);
      std::sort(changed.begin(), changed.end());
      std::sort(moved.begin(), moved.end());
      if (w.changes_listed()) {
        EXPECT_EQ(changed, moved) << "trial " << trial << " op " << op;
      }
      expect_runs_cover_changed(w);
      double on_links = 0.0, on_flows = 0.0;  // every link's rate is its members' rates summed
      for (int l : w.busy_links()) on_links += w.link_rate(l);
      for (int id : present) on_flows += w.rate(id) * static_cast<double>(path_of[static_cast<std::size_t>(id)].size());
      EXPECT_NEAR(on_links, on_flows, 1e-9 * (1.0 + on_flows)) << "trial " << trial << " op " << op;
    }
  }
}

TEST(FlowAfter, HoldsNoneOneOrManyFlowsAndCopies) {
  const auto list = [](const FlowAfter& a) { return std::vector<int>(a.begin(), a.end()); };
  FlowAfter none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(list(none), std::vector<int>{});
  FlowAfter one = {7};
  EXPECT_EQ(one.size(), 1u);
  EXPECT_EQ(list(one), std::vector<int>{7});
  FlowAfter many = std::vector<int>{4, 2, 9};
  EXPECT_EQ(list(many), (std::vector<int>{4, 2, 9}));
  FlowAfter copy = many;  // its own array: changing the original leaves it
  many = {3};
  EXPECT_EQ(list(copy), (std::vector<int>{4, 2, 9}));
  EXPECT_EQ(list(many), std::vector<int>{3});
  copy = one;
  EXPECT_EQ(list(copy), std::vector<int>{7});
  FlowAfter moved = std::move(copy);
  EXPECT_EQ(list(moved), std::vector<int>{7});
  moved = std::vector<int>{};
  EXPECT_TRUE(moved.empty());
  const FlowAfter& self = many;
  many = self;  // self-assignment keeps it
  EXPECT_EQ(list(many), std::vector<int>{3});
}

TEST(BundleIndex, EqualHashesAreToldApartByTheCallersComparison) {
  chorus::sim::flow::BundleIndex index;
  // Where each bundle is stored: insert's answer, updated by the rebuilds' moves.
  std::map<int, std::uint32_t> slot;
  const auto moved = [&](int b, std::uint32_t s) { slot[b] = s; };
  const auto insert = [&](std::uint64_t hash, int b) { slot[b] = index.insert(hash, b, moved); };
  EXPECT_EQ(index.find(7, [](int) { return true; }), -1);
  insert(7, 1);
  insert(7, 2);  // another path with the same hash
  EXPECT_NE(slot[1], slot[2]);
  EXPECT_EQ(index.find(7, [](int b) { return b == 2; }), 2);
  EXPECT_EQ(index.find(7, [](int b) { return b == 1; }), 1);
  EXPECT_EQ(index.find(8, [](int) { return true; }), -1);
  index.erase_at(slot[1]);
  EXPECT_EQ(index.find(7, [](int b) { return b == 1; }), -1);
  EXPECT_EQ(index.find(7, [](int b) { return b == 2; }), 2);  // found past the erased slot
  // Many inserts and erases (tombstones, rebuilds that move entries): what is left is exactly what
  // was not erased, so every slot the moves reported was right.
  for (int b = 10; b < 5000; ++b) insert(static_cast<std::uint64_t>(b % 97), b);
  for (int b = 10; b < 5000; b += 2) index.erase_at(slot[b]);
  for (int b = 5000; b < 9000; ++b) insert(static_cast<std::uint64_t>(b % 97), b);  // rebuilds after erasures
  for (int b = 5001; b < 9000; b += 2) index.erase_at(slot[b]);
  for (int b = 10; b < 9000; ++b) {
    const bool erased = b < 5000 ? b % 2 == 0 : b % 2 == 1;
    EXPECT_EQ(index.find(static_cast<std::uint64_t>(b % 97), [&](int c) { return c == b; }), erased ? -1 : b) << b;
  }
  EXPECT_EQ(index.find(7, [](int b) { return b == 2; }), 2);
  // Slots keep the hash folded to 32 bits (high half xor low half): 0x100000001 and 0 fold alike,
  // and only the caller's comparison tells their bundles apart.
  chorus::sim::flow::BundleIndex folded;
  const auto ignore = [](int, std::uint32_t) {};
  folded.insert(0x100000001ULL, 1, ignore);
  folded.insert(0, 2, ignore);
  EXPECT_EQ(folded.find(0, [](int b) { return b == 2; }), 2);
  EXPECT_EQ(folded.find(0x100000001ULL, [](int b) { return b == 1; }), 1);
  EXPECT_EQ(folded.find(0x100000001ULL, [](int) { return false; }), -1);
}

TEST(WaterFiller, FlowsOfOnePathAreOneBundle) {
  // Three flows on path {0, 1} and one on {1}: link 1 (6 B/ns) is shared by four flows, 1.5 each;
  // link 0 (10 B/ns) has room to spare. The four are two bundles. Removing one of the three leaves
  // 2 B/ns each on link 1 for the remaining three flows, re-filled as the same two bundles.
  WaterFiller w(2);
  const Path both{0, 1}, one{1};
  w.add(0, both);
  w.add(1, both);
  w.add(2, one);
  w.add(3, both);
  w.run({10.0, 6.0});
  EXPECT_EQ(w.refilled(), 4u);
  EXPECT_EQ(w.refilled_bundles(), 2u);
  for (int f = 0; f < 4; ++f) EXPECT_DOUBLE_EQ(w.rate(f), 1.5) << f;
  EXPECT_DOUBLE_EQ(w.link_rate(0), 4.5);
  EXPECT_DOUBLE_EQ(w.link_rate(1), 6.0);
  w.remove(1);
  w.run({10.0, 6.0});
  EXPECT_EQ(w.refilled(), 3u);
  EXPECT_EQ(w.refilled_bundles(), 2u);
  EXPECT_EQ(w.changed(), (std::vector<int>{0, 3, 2}));  // by bundle, each in order of joining
  for (int f : {0, 2, 3}) EXPECT_DOUBLE_EQ(w.rate(f), 2.0) << f;
  EXPECT_DOUBLE_EQ(w.link_rate(0), 4.0);
  // A path whose bundle emptied starts a new one when a flow takes it again.
  w.remove(0);
  w.remove(3);
  w.add(4, both);
  w.run({10.0, 6.0});
  EXPECT_EQ(w.refilled_bundles(), 2u);
  EXPECT_DOUBLE_EQ(w.rate(4), 3.0);
  EXPECT_DOUBLE_EQ(w.rate(2), 3.0);
  EXPECT_DOUBLE_EQ(w.link_rate(0), 3.0);
}

TEST(WaterFiller, EveryRunAfterAddsAndRemovesIsMaxMinFair) {
  // Random joins and departures on random paths, a run after each change: the kept rates and the
  // re-filled ones together must meet the definition for the flows present, every time.
  chorus::Rng rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    const int nl = static_cast<int>(rng.uniform_int(2, 8));
    std::vector<double> cap(static_cast<std::size_t>(nl));
    for (auto& c : cap) c = rng.uniform(0.5, 4.0);
    WaterFiller w(static_cast<std::size_t>(nl));
    std::vector<Path> path_of;
    std::vector<int> present;
    for (int op = 0; op < 40; ++op) {
      if (present.empty() || rng.uniform01() < 0.45) {
        Path p;
        for (int l = 0; l < nl; ++l)
          if (rng.uniform01() < 0.35) p.push_back(l);
        if (p.empty()) p.push_back(static_cast<int>(rng.uniform_int(0, nl - 1)));
        const int id = static_cast<int>(path_of.size());
        path_of.push_back(p);
        w.add(id, p);
        present.push_back(id);
      } else {  // one or several leave at once, as a batch of last bytes does
        const int leaving =
            static_cast<int>(rng.uniform_int(1, std::min<std::int64_t>(3, static_cast<std::int64_t>(present.size()))));
        for (int k = 0; k < leaving; ++k) {
          const auto at = static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(present.size()) - 1));
          w.remove(present[at]);
          present.erase(present.begin() + static_cast<std::ptrdiff_t>(at));
        }
      }
      w.run(cap);
      std::vector<Path> paths;
      std::vector<double> rate;
      for (int id : present) {
        paths.push_back(path_of[static_cast<std::size_t>(id)]);
        rate.push_back(w.rate(id));
      }
      expect_max_min(cap, paths, rate, "trial " + std::to_string(trial) + " op " + std::to_string(op));
      for (std::size_t l = 0; l < cap.size(); ++l) {
        double sum = 0.0;
        for (std::size_t f = 0; f < paths.size(); ++f)
          if (std::count(paths[f].begin(), paths[f].end(), static_cast<int>(l)) > 0) sum += rate[f];
        if (sum > 0.0) {
          EXPECT_NEAR(w.link_rate(static_cast<int>(l)), sum, 1e-9);
        }
      }
    }
  }
}

TEST(FlowModel, ExpanderRingAllReduceConservesBytes) {
  // On any fabric every byte of a ring all-reduce crosses each link of its path once:
  // sum of link bytes = sum over flows of bytes x hops.
  const auto g = expander(16, 4, 100.0, 3);
  Router router(g);
  std::vector<int> order(16);
  for (int i = 0; i < 16; ++i) order[static_cast<std::size_t>(i)] = i;
  std::vector<Flow> flows;
  ring_allreduce(router, order, 16e6, 0.0, flows);
  const auto r = simulate_flows(g, flows);
  double expect = 0.0, got = 0.0;
  for (const auto& f : flows) expect += f.bytes * static_cast<double>(f.path.size());
  for (double b : r.link_bytes) got += b;
  EXPECT_NEAR(got, expect, 1e-6 * expect);
}

TEST(FlowModel, OversubscribedUplinkHalvesCrossTorTraffic) {
  // 8 servers, 4 per ToR, NICs 100 Gbps = 12.5 B/ns; each ToR uplink 4 x 100 / 2 = 200 Gbps = 25 B/ns.
  // Servers 0..3 each send 25000 B to servers 4..7: the 4 flows share ToR 0's uplink -> 6.25 B/ns
  // each (the NIC allows 12.5) -> last byte at 4000 ns; 4 hops x 1 us -> 8000 ns.
  // On the ideal Fat-tree of the same NICs: 25000 / 12.5 = 2000 ns + 2 hops -> 4000 ns.
  for (bool oversub : {true, false}) {
    const auto g = oversub ? oversubscribed_fat_tree(8, 4, 100.0) : fat_tree(8, 100.0);
    Router router(g);
    std::vector<Flow> flows;
    for (int s = 0; s < 4; ++s) point_to_point(router, s, s + 4, 25000.0, 0.0, flows);
    const auto r = simulate_flows(g, flows);
    for (double t : r.finish_ns) EXPECT_DOUBLE_EQ(t, oversub ? 8000.0 : 4000.0) << (oversub ? "oversub" : "ideal");
  }
}

namespace {
// A reference for the engine, written for clarity, not speed: at every event (a start, a last
// byte, a capacity change) the rates are computed from scratch by the textbook form of progressive
// filling (raise every unfrozen flow's rate by the same amount until some link is full; freeze the
// flows of full links; repeat), and time moves to the next event. No latency, no dependencies.
struct CapacityChange {
  double at_ns;
  std::vector<double> bytes_per_ns;
};
std::vector<double> reference_last_bytes(std::vector<double> cap, const std::vector<Path>& paths,
                                         const std::vector<double>& bytes, const std::vector<double>& start,
                                         const std::vector<CapacityChange>& changes) {
  const std::size_t nf = paths.size(), nl = cap.size();
  std::vector<double> left = bytes, last(nf, -1.0);
  std::size_t next_change = 0;
  double t = 0.0;
  for (;;) {
    while (next_change < changes.size() && changes[next_change].at_ns <= t) cap = changes[next_change++].bytes_per_ns;
    std::vector<char> on(nf, 0), frozen(nf, 0);
    bool any = false;
    for (std::size_t f = 0; f < nf; ++f) {
      on[f] = last[f] < 0 && start[f] <= t;
      any = any || last[f] < 0;
    }
    if (!any) return last;
    std::vector<double> rate(nf, 0.0);
    for (;;) {  // textbook progressive filling
      double step = std::numeric_limits<double>::infinity();
      for (std::size_t l = 0; l < nl; ++l) {
        double used = 0.0;
        int open = 0;
        for (std::size_t f = 0; f < nf; ++f)
          if (on[f] && std::count(paths[f].begin(), paths[f].end(), static_cast<int>(l)) > 0) {
            used += rate[f];
            open += frozen[f] ? 0 : 1;
          }
        if (open > 0) step = std::min(step, std::max(0.0, cap[l] - used) / open);
      }
      if (!std::isfinite(step)) break;
      for (std::size_t f = 0; f < nf; ++f)
        if (on[f] && !frozen[f]) rate[f] += step;
      for (std::size_t l = 0; l < nl; ++l) {
        double used = 0.0;
        for (std::size_t f = 0; f < nf; ++f)
          if (on[f] && std::count(paths[f].begin(), paths[f].end(), static_cast<int>(l)) > 0) used += rate[f];
        if (used >= cap[l] - 1e-12 * std::max(1.0, cap[l]))
          for (std::size_t f = 0; f < nf; ++f)
            if (on[f] && std::count(paths[f].begin(), paths[f].end(), static_cast<int>(l)) > 0) frozen[f] = 1;
      }
    }
    double next = std::numeric_limits<double>::infinity();
    for (std::size_t f = 0; f < nf; ++f) {
      if (last[f] >= 0) continue;
      if (!on[f])
        next = std::min(next, start[f]);
      else if (rate[f] > 0)
        next = std::min(next, t + left[f] / rate[f]);
    }
    if (next_change < changes.size()) next = std::min(next, changes[next_change].at_ns);
    for (std::size_t f = 0; f < nf; ++f)
      if (on[f]) left[f] -= rate[f] * (next - t);
    t = next;
    for (std::size_t f = 0; f < nf; ++f)
      if (on[f] && left[f] <= 1e-9 * bytes[f]) last[f] = t;
  }
}
}  // namespace

TEST(FlowEngine, MatchesAFromScratchReferenceUnderArrivalsDeparturesAndCapacityChanges) {
  // Random flows on random links, starting at random times, with capacities changed (some to 0:
  // circuits down) while they run: the engine's incremental re-filling must give every last byte
  // the reference gives.
  chorus::Rng rng(11);
  for (int trial = 0; trial < 150; ++trial) {
    const auto nl = static_cast<std::size_t>(rng.uniform_int(2, 5));
    GraphNetwork g;
    g.servers = 2;
    std::vector<double> cap(nl);
    for (auto& c : cap) {
      c = rng.uniform(0.5, 3.0);
      g.add_link(0, 1, c * 8.0, 0.0);
    }
    const auto nf = static_cast<std::size_t>(rng.uniform_int(2, 10));
    std::vector<Path> paths(nf);
    std::vector<double> bytes(nf), start(nf);
    std::vector<Flow> flows(nf);
    for (std::size_t f = 0; f < nf; ++f) {
      for (std::size_t l = 0; l < nl; ++l)
        if (rng.uniform01() < 0.4) paths[f].push_back(static_cast<int>(l));
      if (paths[f].empty()) paths[f].push_back(static_cast<int>(rng.uniform_int(0, static_cast<std::int64_t>(nl) - 1)));
      bytes[f] = rng.uniform(100.0, 3000.0);
      start[f] = rng.uniform01() < 0.3 ? 0.0 : rng.uniform(0.0, 2000.0);
      flows[f] = flow(paths[f], bytes[f], start[f]);
    }
    std::vector<CapacityChange> changes;
    double at = 0.0;
    const int n_changes = static_cast<int>(rng.uniform_int(0, 3));
    for (int c = 0; c < n_changes; ++c) {
      at += rng.uniform(100.0, 1500.0);
      std::vector<double> next(nl);
      for (auto& x : next) x = (c + 1 < n_changes && rng.uniform01() < 0.3) ? 0.0 : rng.uniform(0.5, 3.0);
      changes.push_back({at, next});
    }
    const auto expect = reference_last_bytes(cap, paths, bytes, start, changes);

    FlowEngine e(g);
    e.flows() = flows;
    e.admit();
    std::vector<int> done;
    std::size_t next_change = 0;
    while (!e.idle()) {
      if (next_change < changes.size() && changes[next_change].at_ns <= e.next_event_ns()) {
        e.advance_to(changes[next_change].at_ns);
        std::vector<double> gbps;
        for (double x : changes[next_change].bytes_per_ns) gbps.push_back(x * 8.0);
        e.set_capacities(gbps);
        ++next_change;
      } else {
        e.step(done);
      }
    }
    for (std::size_t f = 0; f < nf; ++f)
      EXPECT_NEAR(e.result().send_done_ns[f], expect[f], 1e-6 * expect[f]) << "trial " << trial << " flow " << f;
  }
}
