#include "sweep/spec.h"

#include <cmath>
#include <fmt/format.h>

#include "core/error.h"
#include "core/rng.h"
#include "core/suggest.h"
#include "core/units.h"
#include "core/yaml_fields.h"

namespace chorus::sweep {
namespace {

using yaml_fields::Source;

const ParamDef& param_def(const Source& src, const CommandDef& cmd, const YAML::Node& key) {
  const auto name = key.as<std::string>();
  std::vector<std::string> names;
  for (const auto& p : cmd.params) {
    if (p.name == name) return p;
    names.push_back(p.name);
  }
  throw InputError(src.at(key), fmt::format("unknown parameter '{}' of {}{}; its parameters: {}", name, cmd.name,
                                            did_you_mean(name, names), fmt::join(names, ", ")));
}

// A value of `def` as the spec wrote it, checked for its kind.
Value checked_value(const Source& src, const ParamDef& def, const YAML::Node& node) {
  const std::string field = def.name;
  Value v{yaml_fields::scalar<std::string>(src, node, field, "a scalar"), src.at(node)};
  switch (def.kind) {
    case ParamKind::kInt:
      yaml_fields::scalar<long long>(src, node, field, "an integer");
      break;
    case ParamKind::kDouble:
      yaml_fields::scalar<double>(src, node, field, "a number");
      break;
    case ParamKind::kBool:
      yaml_fields::scalar<bool>(src, node, field, "true or false");
      break;
    case ParamKind::kBytes:
      parse_bytes(v.text, fmt::format("{}: field '{}'", v.at, field));
      break;
    case ParamKind::kString:
      break;
  }
  return v;
}

void check_map(const Source& src, const YAML::Node& node, const std::string& field) {
  if (!node.IsMap()) throw InputError(src.at(node), fmt::format("field '{}' must be a map of parameters", field));
}

// The grid: the product of each parameter's values (a scalar is one value), in the file's order
// with the last parameter varying fastest.
std::vector<Point> grid_points(const Source& src, const CommandDef& cmd, const YAML::Node& grid, const Point& fixed,
                               std::vector<std::string>& axes) {
  check_map(src, grid, "grid");
  std::vector<std::pair<std::string, std::vector<Value>>> dims;
  double product = 1;
  for (const auto& kv : grid) {
    const auto& def = param_def(src, cmd, kv.first);
    if (fixed.count(def.name))
      throw InputError(src.at(kv.first), fmt::format("parameter '{}' is in both 'fixed' and 'grid'", def.name));
    std::vector<Value> values;
    if (kv.second.IsSequence()) {
      for (const auto& v : kv.second) values.push_back(checked_value(src, def, v));
      if (values.empty()) throw InputError(src.at(kv.second), fmt::format("grid '{}' has no values", def.name));
    } else {
      values.push_back(checked_value(src, def, kv.second));
    }
    product *= static_cast<double>(values.size());
    axes.push_back(def.name);
    dims.emplace_back(def.name, std::move(values));
  }
  if (product > static_cast<double>(kMaxPoints))
    throw InputError(src.at(grid), fmt::format("the grid has {:.3g} points, more than {}", product, kMaxPoints));
  std::vector<Point> points{fixed};
  for (const auto& [name, values] : dims) {
    std::vector<Point> next;
    next.reserve(points.size() * values.size());
    for (const auto& p : points)
      for (const auto& v : values) {
        next.push_back(p);
        next.back()[name] = v;
      }
    points = std::move(next);
  }
  return points;
}

void add_axis(std::vector<std::string>& axes, const std::string& name) {
  if (std::find(axes.begin(), axes.end(), name) == axes.end()) axes.push_back(name);
}

std::vector<Point> explicit_points(const Source& src, const CommandDef& cmd, const YAML::Node& list, const Point& fixed,
                                   std::vector<std::string>& axes) {
  if (!list.IsSequence()) throw InputError(src.at(list), "field 'points' must be a list of maps of parameters");
  std::vector<Point> points;
  for (const auto& item : list) {
    check_map(src, item, "points");
    Point p = fixed;
    for (const auto& kv : item) {
      const auto& def = param_def(src, cmd, kv.first);
      p[def.name] = checked_value(src, def, kv.second);
      add_axis(axes, def.name);
    }
    points.push_back(std::move(p));
  }
  return points;
}

// One parameter's distribution in `random.params`: {choice: [...]}, {uniform: [lo, hi]},
// {log_uniform: [lo, hi]} (numbers and byte sizes) or {int_uniform: [lo, hi]} (integers).
struct Distribution {
  ParamDef def;
  std::string kind;
  std::vector<Value> choices;
  double lo = 0, hi = 0;
  std::string at;
};

double bound(const Source& src, const ParamDef& def, const YAML::Node& node) {
  const auto v = checked_value(src, def, node);
  if (def.kind == ParamKind::kBytes) return static_cast<double>(parse_bytes(v.text, v.at));
  return yaml_fields::scalar<double>(src, node, def.name, "a number");
}

Distribution distribution(const Source& src, const ParamDef& def, const YAML::Node& node) {
  if (!node.IsMap() || node.size() != 1)
    throw InputError(src.at(node), fmt::format("field '{}' must be one of {{choice: [...]}}, {{uniform: [lo, hi]}}, "
                                               "{{log_uniform: [lo, hi]}}, {{int_uniform: [lo, hi]}}",
                                               def.name));
  yaml_fields::check_keys(src, node, {"choice", "uniform", "log_uniform", "int_uniform"}, def.name + ": ");
  Distribution d{def, node.begin()->first.as<std::string>(), {}, 0, 0, src.at(node)};
  const YAML::Node arg = node.begin()->second;
  if (!arg.IsSequence() || arg.size() == 0)
    throw InputError(src.at(arg), fmt::format("field '{}': '{}' needs a list", def.name, d.kind));
  if (d.kind == "choice") {
    for (const auto& v : arg) d.choices.push_back(checked_value(src, def, v));
    return d;
  }
  const bool numeric = def.kind == ParamKind::kInt || def.kind == ParamKind::kDouble || def.kind == ParamKind::kBytes;
  if (!numeric)
    throw InputError(src.at(arg), fmt::format("field '{}': '{}' needs a numeric parameter", def.name, d.kind));
  if (arg.size() != 2) throw InputError(src.at(arg), fmt::format("field '{}': '{}' needs [lo, hi]", def.name, d.kind));
  d.lo = bound(src, def, arg[0]);
  d.hi = bound(src, def, arg[1]);
  if (!(d.lo <= d.hi) || (d.kind == "log_uniform" && !(d.lo > 0)))
    throw InputError(src.at(arg),
                     fmt::format("field '{}': needs 0 < lo <= hi for log_uniform, lo <= hi otherwise", def.name));
  return d;
}

std::string draw(Rng& rng, const Distribution& d) {
  if (d.kind == "choice")
    return d.choices[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(d.choices.size()) - 1))]
        .text;
  double x = 0;
  if (d.kind == "int_uniform")
    x = static_cast<double>(
        rng.uniform_int(static_cast<std::int64_t>(std::ceil(d.lo)), static_cast<std::int64_t>(std::floor(d.hi))));
  else if (d.kind == "log_uniform")
    x = std::exp(rng.uniform(std::log(d.lo), std::log(d.hi)));
  else
    x = rng.uniform(d.lo, d.hi);
  if (d.def.kind == ParamKind::kDouble && d.kind != "int_uniform") return fmt::format("{}", x);
  return fmt::format("{}", static_cast<long long>(std::llround(x)));
}

std::vector<Point> random_points(const Source& src, const CommandDef& cmd, const YAML::Node& node, const Point& fixed,
                                 std::vector<std::string>& axes) {
  if (!node.IsMap()) throw InputError(src.at(node), "field 'random' must be a map: count, seed, params");
  yaml_fields::check_keys(src, node, {"count", "seed", "params"}, "random: ");
  const auto count =
      yaml_fields::scalar<long long>(src, yaml_fields::require(src, node, "count", "random: "), "count", "an integer");
  if (count < 1 || count > static_cast<long long>(kMaxPoints))
    throw InputError(src.at(node["count"]), fmt::format("field 'count' must be in 1..{}", kMaxPoints));
  const auto seed = yaml_fields::scalar<std::uint64_t>(src, yaml_fields::require(src, node, "seed", "random: "), "seed",
                                                       "a non-negative integer");
  const YAML::Node params = yaml_fields::require(src, node, "params", "random: ");
  check_map(src, params, "params");
  std::vector<Distribution> dists;
  for (const auto& kv : params) {
    dists.push_back(distribution(src, param_def(src, cmd, kv.first), kv.second));
    add_axis(axes, dists.back().def.name);
  }
  Rng rng(seed);
  std::vector<Point> points;
  for (long long i = 0; i < count; ++i) {
    Point p = fixed;
    for (const auto& d : dists) p[d.def.name] = Value{draw(rng, d), d.at};
    points.push_back(std::move(p));
  }
  return points;
}

const CommandDef& command_def(const Source& src, const YAML::Node& node, const std::vector<CommandDef>& commands) {
  const auto name = yaml_fields::scalar<std::string>(src, node, "command", "a command name");
  std::vector<std::string> names;
  for (const auto& c : commands) {
    if (c.name == name) return c;
    names.push_back(c.name);
  }
  throw InputError(src.at(node), fmt::format("field 'command': unknown command '{}'{}; a sweep runs: {}", name,
                                             did_you_mean(name, names), fmt::join(names, ", ")));
}

}  // namespace

Spec parse_spec(const std::string& text, const std::string& file, const std::vector<CommandDef>& commands) {
  const Source src{file};
  const YAML::Node root = yaml_fields::load(text, file);
  try {
    if (!root.IsMap()) throw InputError(file, "a sweep spec is a map: command, fixed, grid, points, random");
    yaml_fields::check_keys(src, root, {"command", "fixed", "grid", "points", "random"}, "");
    const auto& cmd = command_def(src, yaml_fields::require(src, root, "command", ""), commands);
    Spec spec{file, cmd.name, {}, {}};
    Point fixed;
    if (root["fixed"]) {
      check_map(src, root["fixed"], "fixed");
      for (const auto& kv : root["fixed"]) {
        const auto& def = param_def(src, cmd, kv.first);
        fixed[def.name] = checked_value(src, def, kv.second);
      }
    }
    const bool any = root["grid"] || root["points"] || root["random"];
    if (root["grid"] || !any)
      spec.points =
          grid_points(src, cmd, root["grid"] ? root["grid"] : YAML::Node(YAML::NodeType::Map), fixed, spec.axes);
    if (root["points"]) {
      auto more = explicit_points(src, cmd, root["points"], fixed, spec.axes);
      spec.points.insert(spec.points.end(), more.begin(), more.end());
    }
    if (root["random"]) {
      auto more = random_points(src, cmd, root["random"], fixed, spec.axes);
      spec.points.insert(spec.points.end(), more.begin(), more.end());
    }
    if (spec.points.size() > kMaxPoints)
      throw InputError(file, fmt::format("{} points, more than {}", spec.points.size(), kMaxPoints));
    return spec;
  } catch (const YAML::Exception& e) {
    throw yaml_fields::structure_error(e, file);
  }
}

}  // namespace chorus::sweep
