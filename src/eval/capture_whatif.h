#pragma once
// What-ifs from a capture (docs/capture.md, "What-ifs"): one captured program simulated on several
// networks (presets, network YAML files, graph fabrics) under each scheduler, replicated to a larger
// world and with its compute sped up; per network and scheduler, the iteration time split into
// compute and exposed communication (sim::StageSplit: iteration = compute + exposed communication).
#include <optional>
#include <string>
#include <vector>

#include "net/graph/graph_network.h"
#include "net/network.h"
#include "workload/compute_model.h"

namespace chorus::eval {

// A network as its front end resolved it: `label` as given (a preset, a file, "host").
struct WhatIfNetwork {
  std::string label;
  std::optional<net::Network> dims;         // a dimension network (the analytical model) ...
  std::optional<net::GraphNetwork> fabric;  // ... or a graph fabric (the flow-level model)
};

struct WhatIfConfig {
  std::string capture;  // the capture's directory (manifest.json)
  std::vector<WhatIfNetwork> networks;
  // Dimension networks run each; a fabric runs the flow-level model once (its row's scheduler: "flow").
  std::vector<std::string> schedulers = {"baseline", "themis-scf"};
  // The world the capture is replicated to; 0: each network's NPUs (servers), which must then be a
  // multiple of the capture's ranks (InputError naming the network's label otherwise).
  int world = 0;
  std::string world_field = "world";  // the name errors give `world`
  // The capture's sub-groups that grow with the world (workload::capture::ImportOptions::grow_groups).
  std::vector<std::string> grow_groups;
  std::string grow_field = "grow_groups";
  double compute_scale = 1;  // compute this many times as fast (workload/compute_scale.h)
  int iterations = 1;        // the capture's window repeated
  int chunks = 64;
  workload::ComputeModel compute;  // operators without a measured duration (the roofline)
};

struct WhatIfRow {
  std::string network, shape, scheduler;
  long long npus = 0, world = 0;
  // Per iteration (the window): iteration = compute + exposed communication.
  double iteration_ns = 0, compute_ns = 0, exposed_comm_ns = 0;
  double bytes_per_npu = 0;  // sent per iteration
};

struct WhatIfStudy {
  WhatIfConfig config;
  int captured_world = 0;
  int first_step = 0, last_step = 0;  // the capture's window: steps first_step .. last_step - 1
  std::vector<WhatIfRow> rows;
  std::string notes;  // the import's, on the first network
};

// InputError naming the capture's files (workload/capture/capture_import.h), `world_field`, a
// network's label or the scheduler.
WhatIfStudy run_capture_whatif(const WhatIfConfig& config);

// DIR/whatif.csv (one row per network and scheduler, ns per iteration), DIR/whatif.json (the
// parameters and the rows), then (chorus.plot capture-whatif, matplotlib) DIR/whatif.svg: stacked
// bars of compute and exposed communication. Returns the paths written; InputError if plotting
// fails (the data files are written by then).
std::vector<std::string> write_whatif_outputs(const WhatIfStudy& study, const std::string& dir);
std::string format_whatif_table(const WhatIfStudy& study);

}  // namespace chorus::eval
