#pragma once
// One resolver for every workload spec chorus reads (docs/workloads.md): a model zoo name, a
// workload YAML, an ASTRA-sim text workload (1.0 files, 2.x's text converter's input), a Chakra
// trace (`name.<rank>.et`, the prefix `name`, or a directory holding one trace's per-rank files),
// a PyTorch execution graph (JSON), or a `chorus capture` directory (its manifest.json). The format is found here, once, so that no front end
// sniffs files. Errors name the spec's file (with its line, node or field) or the caller's
// `field`, never a command-line flag; front ends map their flags onto the options.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "net/network.h"
#include "workload/dag.h"
#include "workload/zoo.h"

namespace chorus::workload {

enum class WorkloadFormat { kModel, kAstraText, kChakra, kExecutionGraph, kCapture };
// "model" (zoo name or workload YAML), "ASTRA-sim workload file", "Chakra trace", "PyTorch execution graph",
// "chorus capture" (a directory with manifest.json, workload/capture/capture_import.h).
std::string_view to_string(WorkloadFormat format);

struct LoadOptions {
  int iterations = 1;
  double ns_per_cycle = 1.0;      // ASTRA-sim text: nanoseconds per compute cycle
  int rank = -1;                  // Chakra, captures: whose file (-1: the number in the file name, else 0)
  bool skip_unsupported = false;  // Chakra: collectives chorus does not simulate finish at once
  bool ctrl_deps = false;         // Chakra: ctrl_deps are dependencies too
  // Chakra traces and execution graphs (`<name>.<rank>.et` / `.json`): import every other rank's
  // file (ranks 0, 1, ... while their files exist, below the network's NPU count) and require
  // the same collectives as the loaded rank's.
  bool check_ranks = false;
  // Execution graphs (ExecutionGraphOptions): a torch profiler trace of the loaded rank, and the
  // dimensions of each collective's process group.
  std::string profiler_trace;
  std::map<int, std::vector<int>> collective_dims;
  // Captures: the world the capture is scaled to (0: its own; capture::ImportOptions::world), and
  // the name errors give it.
  int world = 0;
  std::string world_field = "world";
  // Captures: the groups that grow with the world (capture::ImportOptions::grow_groups), and the
  // name errors give them.
  std::vector<std::string> grow_groups;
  std::string grow_field = "grow_groups";
};

struct LoadedWorkload {
  WorkloadFormat format = WorkloadFormat::kModel;
  std::string file;  // the file read (a Chakra prefix or directory: its rank's .et); empty for a zoo name
  // kModel: the model and its parallelism (iterations set), its DAG not built: its network is the
  // caller's (a dimension network, or workload::logical_network of the job on a fabric).
  std::optional<ZooEntry> model;
  // The other formats: the DAG imported on `network` (which the file's collectives span).
  Dag dag;
  std::string notes;  // Chakra, execution graphs: what the import skipped, ignored or matched ("" if nothing)
  // Chakra traces and execution graphs named per rank (`<name>.<rank>.et` / `.json`): how many
  // ranks' files lie next to the loaded one (<name>.0, .1, ... while they exist), the job's world
  // as recorded; 0 for a file not named per rank and for the other formats.
  int ranks = 0;
};

// The format of `spec` (`rank` picks a Chakra prefix's file). A spec that is no trace, graph or
// ASTRA-sim file is kModel (load then says if it is no zoo name or workload YAML either).
WorkloadFormat format_of(const std::string& spec, int rank = -1);

// Loads `spec`; imports are built on `network`. InputError naming the file (and line / node /
// field) for malformed files, `field` when `spec` names nothing chorus can read, and the file for
// check_ranks on a file that is not per-rank.
LoadedWorkload load(const std::string& spec, const net::Network& network, const LoadOptions& options = {},
                    const std::string& field = "workload");

}  // namespace chorus::workload
