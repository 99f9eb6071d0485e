#pragma once
// A point's key: a hash of its command and parameters (names and values as the spec wrote them),
// the same in every run of the same spec, so that a resumed sweep finds the points it has.
#include <string>

#include "sweep/spec.h"

namespace chorus::sweep {

// 16 hex digits: FNV-1a (64-bit, byte by byte as the algorithm defines it, so stable across
// builds) of "command", then "name=value" per parameter in name order, each ended by a NUL.
std::string point_key(const std::string& command, const Point& point);

}  // namespace chorus::sweep
