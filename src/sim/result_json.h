#pragma once
// JSON form of a simulated collective (the `chorus sim collective --json` output).
#include <nlohmann/json.hpp>

#include "net/network.h"
#include "sim/run_collective.h"

namespace chorus::sim {

// Keys: topology, npus, op, size_bytes, chunks, scheduler, time_ns, ideal_time_ns,
// avg_bw_utilization, dims[{index, kind, size, aggregate_bandwidth_GBps (GB/s per NPU, as the
// table), aggregate_bandwidth_gbps (the same in Gb/s; deprecated), bytes_per_npu, busy_ns,
// active_ns, utilization}] and, with `with_schedules`, chunks_schedule
// [{chunk, rs_order, ag_order}] (or a2a_order) and dim_order [[{chunk, phase}]].
nlohmann::json to_json(const net::Network& network, const CollectiveRun& run, bool with_schedules);

}  // namespace chorus::sim
