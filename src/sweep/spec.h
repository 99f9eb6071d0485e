#pragma once
// A sweep's specification (a YAML file): the command every point runs and the points, as a grid
// (the product of each parameter's values), explicit points, and seeded random samples, each
// over the command's parameters. Every value keeps where the file gave it (file:line) so that a
// point's error names the field that set it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace chorus::sweep {

// How a parameter's values are checked and sampled.
enum class ParamKind { kString, kInt, kDouble, kBytes, kBool };

struct ParamDef {
  std::string name;  // the key in the spec
  ParamKind kind = ParamKind::kString;
};

// A command a sweep can run and the parameters it takes.
struct CommandDef {
  std::string name;  // "sim collective"
  std::vector<ParamDef> params;
};

struct Value {
  std::string text;  // as the spec wrote it (random samples: as drawn)
  std::string at;    // "file:line"
};

// One point: parameter name -> value (sorted by name, so its key does not depend on the order).
using Point = std::map<std::string, Value>;

struct Spec {
  std::string file;
  std::string command;
  std::vector<std::string> axes;  // the parameters that vary (grid, points, random), in the file's order
  std::vector<Point> points;      // the grid, then the explicit points, then the random samples
};

// Parses a spec's text; `commands` are the commands a sweep may name. Every error is an
// InputError naming file:line and the field.
Spec parse_spec(const std::string& text, const std::string& file, const std::vector<CommandDef>& commands);

// The points a sweep may hold at most (a grid's product is checked before it is built).
inline constexpr std::size_t kMaxPoints = 10'000'000;

}  // namespace chorus::sweep
