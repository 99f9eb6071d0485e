#pragma once
// The chorus workload YAML format (docs/workloads.md, "Workload files"): a model as layers
// plus its parallelism. Unknown keys are errors; every error names file:line and field.
#include <string>

#include "workload/zoo.h"

namespace chorus::workload {

ZooEntry parse_workload_yaml(const std::string& text, const std::string& source_name);
ZooEntry load_workload_file(const std::string& path);
// A zoo name, or else a workload YAML file; InputError naming `field` otherwise.
ZooEntry load_workload(const std::string& name_or_path, const std::string& field = "workload");

}  // namespace chorus::workload
