// Torch profiler traces (workload/torch_profiler_trace): JSON, the two layouts (a list of events,
// an object with traceEvents), event fields, nesting per thread and the time inside c10d:: calls.
#include "fuzz_target.h"
#include "workload/torch_profiler_trace.h"

static void parse(const std::string& text) { (void)chorus::workload::read_profiler_trace(text, "fuzz.json"); }
CHORUS_FUZZ_TARGET(parse)
