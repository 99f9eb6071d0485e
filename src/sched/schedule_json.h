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

// Parses and checks a schedule against `network`: every chunk visits every dimension exactly
// once per phase of the operation, and dim_order (if present) lists each chunk operation of
// each dimension exactly once. Throws InputError naming `source` and the field.
Schedule schedule_from_json(const nlohmann::json& j, const net::Network& network, const std::string& source);
// The text of a schedule file; `source` names it in errors.
Schedule parse_schedule_json(const std::string& text, const net::Network& network, const std::string& source);
Schedule load_schedule_file(const std::string& path, const net::Network& network);

}  // namespace chorus::sched
