#pragma once
// A result object as CSV (`--csv FILE` of `chorus sim collective` and `chorus sim workload`):
// the JSON the command prints with --json, so the two never disagree. Scalars become columns
// (nested objects as "outer.inner"); with `rows_key`, each element of that array of objects is
// a row ("dims" -> "dim.index", "dim.kind", ...) and the object's scalars repeat on every row.
// Other arrays are left out. Numbers keep full precision; strings are quoted when they must be.
#include <string>

#include <nlohmann/json.hpp>

namespace chorus {

std::string json_to_csv(const nlohmann::json& object, const std::string& rows_key = "",
                        const std::string& row_prefix = "");

}  // namespace chorus
