#pragma once
// The model zoo of Themis Sec. 5.2, each with the parallelism the paper uses. Layer sizes
// and their sources: docs/workloads.md.
#include <string>
#include <vector>

#include "workload/model.h"
#include "workload/parallelism.h"

namespace chorus::workload {

struct ZooEntry {
  Model model;
  ParallelismConfig parallelism;  // iterations left at the default
};

const std::vector<std::string>& zoo_names();  // resnet152, transformer-1t, ...
// Throws InputError naming `field` (with a did-you-mean) for an unknown name.
ZooEntry zoo_model(const std::string& name, const std::string& field = "--workload");

// The models themselves (batch = per-NPU mini-batch).
Model resnet152(int batch);
Model transformer_1t(int batch);
Model dlrm(int batch);
Model gnmt(int batch);
Model moe(int batch);

}  // namespace chorus::workload
