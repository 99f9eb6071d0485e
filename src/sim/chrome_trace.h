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

}  // namespace chorus::sim
