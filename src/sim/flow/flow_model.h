#pragma once
// Flow-level network model: flows share the links of a GraphNetwork max-min fairly. Rates come
// from progressive filling (water-filling) and are recomputed at every flow start and every
// flow's last byte; between those events rates are constant (event-driven, exact up to floating
// point). A flow's completion is the time its last byte is sent plus the sum of the latencies of
// the links on its path (propagation is added once, after the transfer: a store-and-forward-free,
// pipelined model). Rules and sources: docs/graph-networks.md.
//
// FlowEngine is the model as an online engine: flows are added while it runs (the training DAG's
// network model adds a collective's flows when the DAG starts it) and time advances event by
// event. simulate_flows() runs a fixed list of flows to the end.
#include <cstdint>
#include <utility>
#include <memory>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "net/graph/graph_network.h"
#include "net/graph/routing.h"
#include "sim/flow/flow_after.h"
#include "sim/flow/flow_events.h"
#include "sim/flow/min_tree.h"

namespace chorus::sim::flow {

struct Flow {
  net::Path path;  // link indices; empty = a local/barrier flow that takes no time
  double bytes = 0.0;
  double start_ns = 0.0;  // earliest start
  FlowAfter after;        // earlier flows (smaller index) that must have completed (incl. latency) first
  int src = -1;           // servers, for the traffic matrix (-1: none)
  int dst = -1;
  double delay_ns = 0.0;  // completes this much later than last byte + path latency
};

struct FlowResult {
  std::vector<double> start_ns;         // per flow: actual start (max of start_ns and `after`)
  std::vector<double> send_done_ns;     // per flow: last byte sent
  std::vector<double> finish_ns;        // per flow: send_done + path latency
  std::vector<double> link_bytes;       // per link: bytes carried
  std::vector<double> link_busy_ns;     // per link: time with at least one active flow
  std::int64_t reallocations = 0;       // rate recomputations (progressive filling runs)
  std::int64_t full_reallocations = 0;  // of which filled every flow anew (a flow joined, capacities changed)
  std::int64_t refilled_flows = 0;      // flows given a rate, summed over the reallocations
  std::int64_t refilled_bundles = 0;    // the bundles (flows of one path) among them: the filler's work
  std::int64_t events = 0;              // distinct event times processed
  double makespan_ns = 0.0;             // max finish
};

class WaterFiller;

// Batch tolerances are in [0, kMaxBatchTolerance), for the engine and every command alike: the
// error grows with the tolerance (BENCHMARKS-history.md measures it at 1e-3, what reproduce topoopt runs).
inline constexpr double kMaxBatchTolerance = 0.1;

// Throws InputError("batch_tolerance", ...) unless 0 <= tolerance < kMaxBatchTolerance.
void check_batch_tolerance(double tolerance);

class FlowEngine {
 public:
  // `batch_tolerance` = 0: exact (rates recomputed at every last byte). > 0: when a flow's last byte
  // is sent, every flow that would send its own within batch_tolerance x its elapsed time (at the
  // current rates) leaves its links with it, in one reallocation; its last byte is recorded where
  // its current rate puts it and all its bytes are counted on its links, so the only error is
  // that the others get its capacity up to that fraction of its duration early. Many flows of an
  // all-to-all end at distinct but close times; batching them cuts the reallocations 3-14x
  // (BENCHMARKS-history.md gives the measured error).
  explicit FlowEngine(const net::GraphNetwork& net, double batch_tolerance = 0.0);
  ~FlowEngine();
  FlowEngine(const FlowEngine&) = delete;
  FlowEngine& operator=(const FlowEngine&) = delete;

  // Flows are appended here (directly or by the builders of traffic.h) and then admitted; a flow
  // must not change once admitted (but for reroute). Indices are positions in this list.
  std::vector<Flow>& flows() { return flows_; }
  const std::vector<Flow>& flows() const { return flows_; }
  // Admits every flow appended since the last call. A flow starts at the latest of its start_ns,
  // now_ns() and the completion of every flow in its `after`. Throws chorus::InputError naming
  // "flows[i]" for negative or non-finite bytes or start, a link out of range, or an `after`
  // index that is not an earlier flow (so dependencies can never form a cycle); nothing of the
  // batch is admitted then.
  void admit();

  // No flow sending and nothing scheduled.
  bool idle() const { return active_.empty() && events_.empty(); }
  double now_ns() const { return t_; }
  // Time of the next event (a start, a last byte or a completion); only when !idle().
  double next_event_ns() const;
  // Moves time to next_event_ns() and processes everything due then; appends to `completed`
  // the flows that completed (last byte + latency) at that time.
  void step(std::vector<int>& completed);
  // Steps until idle.
  void run();

  // Reconfigurable fabrics (TopoOpt-reconfig): time moves to `at_ns` without an event (now <=
  // at_ns, and no event before it: at_ns <= next_event_ns() unless idle).
  void advance_to(double at_ns);
  // New capacities for every link (Gb/s, >= 0; 0 holds the link's flows at rate 0) from now on;
  // rates are recomputed at once. InputError for a wrong count or a negative value.
  void set_capacities(const std::vector<double>& gbps);
  // Links down for a while (sim/jobs): each (flow, path) moves an admitted flow whose last byte is
  // not sent yet onto `path` (link indices of the fabric, the same endpoints) from now on: the
  // bytes it has sent stay counted on its old links, the rest goes on the new ones, and its
  // completion takes the new path's latency. Rates are recomputed at once. InputError naming
  // "reroute" for a flow out of range, one already sent, or a link out of range.
  void reroute(const std::vector<std::pair<int, net::Path>>& moves);
  // Per link, the bytes its capacity could have carried from time 0 to `until_ns` (>= the last
  // capacity change): capacity x time, summed over set_capacities' changes.
  std::vector<double> link_capacity_bytes(double until_ns) const;
  // Flows sending now, and the bytes one of them has left to send.
  const std::vector<int>& sending() const { return active_; }
  double remaining_bytes(int f) const;
  double rate_bytes_per_ns(int f) const;

  const FlowResult& result() const { return res_; }

  // Utilization over time: from now on also counts, per link, the bytes carried in each window
  // [i w, (i + 1) w) of time (call before the first step; w > 0). link_window_bytes()[i][link];
  // windows are added as time reaches them. A batched flow's last bytes (batch_tolerance > 0)
  // count in the window in which its links are freed.
  void record_link_windows(double window_ns);
  double link_window_ns() const { return window_ns_; }
  const std::vector<std::vector<double>>& link_window_bytes() const { return window_bytes_; }

 private:
  void settle();  // brings the link counters up to now
  void add_window_bytes(int link, double bytes_per_ns, double from_ns, double to_ns);
  std::vector<double>& window(std::size_t i);  // window_bytes_[i], added if new
  void finish_sending(int f, double at_ns);    // last byte sent at at_ns (>= now)
  void reallocate();
  void start_sending(int f);
  void stop_sending(std::size_t at);  // the flow at active_[at] leaves the sending set

  const net::GraphNetwork& net_;
  double tolerance_;
  std::vector<double> capacity_;        // bytes/ns per link
  std::vector<double> capacity_bytes_;  // capacity x time before capacity_since_
  double capacity_since_ = 0.0;
  std::vector<Flow> flows_;
  std::size_t admitted_ = 0;
  FlowResult res_;

  // Per flow.
  std::vector<int> pending_;   // `after` flows not yet completed
  std::vector<double> ready_;  // latest completion among `after` so far
  // Flows waiting for a flow: the first inline (most flows have one: the barrier after them), the
  // others (a barrier's: the flows of a collective) in a map. One record per flow, so that a
  // completion reads one line.
  struct Waiters {
    int first = -1;         // -1: none
    std::uint8_t more = 0;  // it has others, in more_dependents_
    std::uint8_t done = 0;  // completed
  };
  std::vector<Waiters> waiters_;
  std::unordered_map<int, std::vector<int>> more_dependents_;
  std::vector<int> at_;  // position in active_, -1 when not sending

  // Events: (time, kind, flow); kind 0 = completion (releases dependents), 1 = start.
  FlowEvents events_;
  // Flows sending now, by position (removal moves the last one into the gap): bytes left at
  // `anchor` (the last change of its rate), rate, size and since when it has had a rate (the
  // batch tolerance scales with that). Nothing here is touched for
  // a flow whose rate does not change, so an event costs what changes, not what is in flight.
  struct Sending {
    double left, anchor, rate, bytes, since;  // one record: a rate change reads and writes one line
  };
  std::vector<int> active_;
  std::vector<Sending> send_;
  std::vector<int> bundle_;  // by position: the filler's bundle of the flow there
  MinTree last_byte_;        // by position: when its last byte goes at its current rate (inf: rate 0)
  std::vector<std::size_t> due_;
  struct Leaving {  // a flow due that leaves its links now
    int flow;
    double at;     // its last byte
    double left;   // bytes left, counted on its links now (batched)
    bool batched;  // its last byte is later (at), within the batch tolerance
  };
  std::vector<Leaving> leaving_;
  double t_ = 0.0;                                 // now
  double settled_ = 0.0;                           // time the link counters were last brought up to
  double window_ns_ = 0.0;                         // record_link_windows' window; 0: not recorded
  std::vector<std::vector<double>> window_bytes_;  // [window][link]

  std::unique_ptr<WaterFiller> filler_;  // the active flows
};

// Simulates a fixed list of flows to the end (a FlowEngine with all flows admitted at time 0).
// Throws chorus::InputError as FlowEngine::admit does.
FlowResult simulate_flows(const net::GraphNetwork& net, const std::vector<Flow>& flows);

// Max-min fair rates (bytes/ns) of flows sharing links of capacity `capacity` (bytes/ns), by
// progressive filling. Exposed for tests. paths[i] must be non-empty.
std::vector<double> max_min_rates(const std::vector<double>& capacity, const std::vector<const net::Path*>& paths);

}  // namespace chorus::sim::flow
