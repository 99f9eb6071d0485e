#pragma once
// A Schedule as JSON, so it can be saved, inspected, and loaded again by the simulator or a
// runtime (docs/schedule-format.md):
//   {"format": "chorus-schedule", "version": 1, "op": "allreduce", "size_bytes": 1e9,
//    "num_chunks": 2, "scheduler": "themis-scf", "policy": "scf",
//    "chunks": [{"chunk": 0, "rs_order": [0, 1], "ag_order": [1, 0]}, ...],
//    "dim_order": [[{"chunk": 0, "phase": "RS"}, ...], ...]}
#include <nlohmann/json.hpp>
#include <string>

#include "net/network.h"
#include "sched/schedule.h"

namespace chorus::sched {

nlohmann::json chunks_to_json(const Schedule& schedule);     // the "chunks" array
nlohmann::json dim_order_to_json(const Schedule& schedule);  // the "dim_order" array
nlohmann::json to_json(const Schedule& schedule);

// Chunk stages of a schedule of `op` on `num_dims` dimensions: each of `num_chunks` chunks
// visits every dimension once per phase of the operation (an all-reduce's two, else one).
double schedule_stages(CollectiveKind op, double num_chunks, std::size_t num_dims);

// About the memory a schedule of `stages` chunk stages takes as JSON while it is built and
// written (chunks_to_json and dim_order_to_json, or to_json, and the dumped text): measured
// ~0.7 KB a stage (4.1 KB a chunk of a 3-dimension all-reduce), estimated as 0.9 KB. A caller
// checks it against the memory budget (core/memory_budget.h) before it builds the JSON.
double schedule_json_bytes(double stages);

// Parses and checks a schedule against `network`: every chunk visits every dimension exactly
// once per phase of the operation, and dim_order (if present) lists each chunk operation of
// each dimension exactly once. Throws InputError naming `source` and the field.
Schedule schedule_from_json(const nlohmann::json& j, const net::Network& network, const std::string& source);
// The text of a schedule file; `source` names it in errors.
Schedule parse_schedule_json(const std::string& text, const net::Network& network, const std::string& source);
Schedule load_schedule_file(const std::string& path, const net::Network& network);

}  // namespace chorus::sched
