#pragma once
// The model zoo of Themis Sec. 5.2 and of TopoOpt (NSDI '23) Table 2, each with the
// parallelism the paper uses (or our reading of it). Layer sizes and their sources:
// docs/workloads.md.
#include <map>
#include <string>
#include <vector>

#include "workload/model.h"
#include "workload/parallelism.h"

namespace chorus::workload {

struct ZooEntry {
  Model model;
  ParallelismConfig parallelism;  // iterations left at the default
  // A workload file's parallelism keys (mp_npus, tp, ...): where errors about their values point,
  // "file:line: field 'parallelism.<key>'". Empty for the zoo's models.
  std::map<std::string, std::string> origin;
};

// The names errors give the layout's settings: the workload file's fields where it sets them.
LayoutFields layout_fields(const ZooEntry& entry);
// InputError at the workload file's field when its mp_npus or ep_npus exceed the network's NPUs
// (a group larger than the job; the zoo's own "up to 128 NPUs" groups are not checked).
void check_groups_fit(const ZooEntry& entry, const net::Network& network);

const std::vector<std::string>& zoo_names();  // resnet152, transformer-1t, ..., topoopt-dlrm
// Throws InputError naming `field` (with a did-you-mean) for an unknown name.
ZooEntry zoo_model(const std::string& name, const std::string& field = "workload");
// The same model at another per-NPU mini-batch (`batch` > 0; 0: the zoo's own), the
// parallelism unchanged (sensitivity studies: eval/themis_sensitivity.h).
ZooEntry zoo_model(const std::string& name, int batch, const std::string& field = "workload");

// The models themselves (batch = per-NPU mini-batch).
Model resnet152(int batch);
Model transformer_1t(int batch);
Model dlrm(int batch);
Model gnmt(int batch);
Model moe(int batch);
// TopoOpt Table 2, top row: zoo names topoopt-candle, topoopt-bert, topoopt-dlrm.
Model candle_uno(int batch);
Model bert_topoopt(int batch);
Model dlrm_topoopt(int batch);

}  // namespace chorus::workload
