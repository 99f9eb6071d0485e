#pragma once
// A command's --json result as one row: every scalar under its path, objects' keys joined by '.'
// and arrays' elements by their index ("dims.0.utilization"), in the object's order.
#include <nlohmann/json.hpp>

namespace chorus::sweep {

nlohmann::ordered_json flatten(const nlohmann::ordered_json& result);

}  // namespace chorus::sweep
