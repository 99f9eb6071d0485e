#pragma once
// Chrome trace-event JSON of a simulated collective (opens in Perfetto / chrome://tracing).
// Process "dimensions": one track per dimension with each chunk stage's bandwidth phase.
// Process "chunks": one track per chunk with each stage from arrival to completion.
#include <nlohmann/json.hpp>

#include "net/network.h"
#include "sim/run_collective.h"

namespace chorus::sim {

// `run` must have been simulated with SimOptions::record_stages.
nlohmann::json chrome_trace(const net::Network& network, const CollectiveRun& run);

// About the memory chrome_trace() of a run of `stages` chunk stages (sched::schedule_stages)
// takes while it is recorded, built and written: two events a stage, measured ~5.5 KB a stage
// (33 KB a chunk of a 3-dimension all-reduce), estimated as 7 KB. A caller checks it against the
// memory budget (core/memory_budget.h) before it simulates with record_stages.
double chrome_trace_bytes(double stages);

// Building blocks shared with the workload trace (sim/workload_json.h):
// a metadata event naming process `pid` (tid < 0) or its thread `tid`;
void add_trace_name(nlohmann::json& events, int pid, int tid, const char* what, const std::string& name);
// process `pid` named `name` ("dimensions"), with one named thread per network dimension.
void add_dimension_tracks(nlohmann::json& events, const net::Network& network, int pid,
                          const std::string& name = "dimensions");

}  // namespace chorus::sim
