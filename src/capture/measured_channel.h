#pragma once
// The backend's channel as the capture itself measured it: the latency and bandwidth of `--topology
// host` for a capture, from the communication log of its window rather than from constants.
//
// Every rank logs each collective's start and end on the host's monotonic clock (rt/comm_log.h).
// A collective on the whole world cannot end before its last rank starts it; the first rank to
// end it is the one least delayed by the host's scheduler after that. So its transfer time is
//   d = min over ranks of end - max over ranks of start.
// The host model is one switch dimension of P ranks (halving-doubling, docs/themis-model.md): an
// all-reduce of S bytes takes 2 log2(P) steps of latency L and sends 2 (P-1)/P S bytes at the
// bandwidth B: d = 2 log2(P) L + 2 (P-1)/P S / B. From the window's all-reduces on the world:
//   L = the median of d / (2 log2 P) over those of at most kSmallBytes (the bytes' time is
//       negligible beside the latency there),
//   B = the median of 2 (P-1)/P S / (d - 2 log2(P) L) over those of at least kLargeBytes.
// Each is measured only if the window has such all-reduces; otherwise it stays the host model's
// (syndicate/topology.cpp), as it does for a log without start and end times.
#include <string>
#include <thread>

#include "net/network.h"
#include "workload/capture/capture_manifest.h"

namespace chorus::capture {

inline constexpr double kSmallBytes = 1024;
inline constexpr double kLargeBytes = 65536;

struct MeasuredChannel {
  double latency_ns = 0, bandwidth_gbps = 0;  // 0: not measured (the host model's stays)
  int latency_from = 0, bandwidth_from = 0;   // how many all-reduces each came from
};

// One all-reduce on the whole world as every rank logged it: its bytes, each rank's start and end.
struct LoggedAllReduce {
  double bytes = 0;
  std::vector<std::int64_t> start_ns, end_ns;  // by rank
};

// The fit above over `ops` on `ranks` ranks (pure: unit-tested by hand).
MeasuredChannel fit_channel(const std::vector<LoggedAllReduce>& ops, int ranks);

// The window's all-reduces on the whole world from every rank's log (the k-th of each rank's
// window is the same collective, as the import joins them), fitted.
MeasuredChannel measured_channel(const workload::capture::Manifest& m);

// host_network (host_network.h) for the capture's backend on `ranks` ranks, its latency and
// bandwidth the capture's measured ones where measured; the network's name says which. Only when
// the capture's ranks had a CPU each (world <= `cpus`, this host's): with more ranks than CPUs a
// collective's time in the log is mostly the scheduler's (a rank descheduled while its peers
// transfer: 0.1-1.7 Gb/s fitted from 4 ranks on 2 cores), and the host model's values stay.
net::Network capture_host_network(const workload::capture::Manifest& m, int ranks, const std::string& field,
                                  unsigned cpus = std::thread::hardware_concurrency());

}  // namespace chorus::capture
