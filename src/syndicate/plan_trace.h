#pragma once
// A Chrome trace-event timeline (Perfetto, chrome://tracing) of a scheduled plan: process
// "compute" with the compute stream, process "channels" with one track per channel showing the
// steps that hold it, labelled with comm-op, step and sequence number.
#include <nlohmann/json.hpp>

#include "syndicate/opt_sched.h"

namespace chorus::syndicate {

// `schedule` must have been recorded (Scheduler::run(..., record = true)).
nlohmann::json plan_trace(const Problem& problem, const PlanChoice& plan, const Schedule& schedule);

}  // namespace chorus::syndicate
