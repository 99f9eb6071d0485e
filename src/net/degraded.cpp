#include "net/degraded.h"

#include <cmath>
#include <fmt/format.h>

#include "core/error.h"

namespace chorus::net {

DimDegradation parse_dim_degradation(const std::string& text, const std::string& field) {
  const auto colon = text.find(':');
  const auto bad = [&](const std::string& why) {
    return InputError(field, fmt::format("'{}': {} (expected DIM:FRACTION, e.g. 1:0.5)", text, why));
  };
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos) throw bad("not two fields");
  const std::string dim = text.substr(0, colon), fraction = text.substr(colon + 1);
  DimDegradation d;
  std::size_t used = 0;
  try {
    d.dim = std::stoi(dim, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (dim.empty() || used != dim.size() || d.dim < 0) throw bad("the dimension must be an integer >= 0");
  try {
    d.fraction = std::stod(fraction, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (fraction.empty() || used != fraction.size() || !std::isfinite(d.fraction) || !(d.fraction > 0) || d.fraction > 1)
    throw bad("the fraction of bandwidth must be a number in (0, 1]");
  return d;
}

Network degrade(const Network& network, const std::vector<DimDegradation>& degradations, const std::string& field) {
  Network out = network;
  for (const auto& d : degradations) {
    if (d.dim < 0 || d.dim >= network.num_dims())
      throw InputError(field, fmt::format("dimension {}: the network {} has dimensions 0..{}", d.dim, network.name,
                                          network.num_dims() - 1));
    if (!(d.fraction > 0) || d.fraction > 1)
      throw InputError(field, fmt::format("dimension {}: fraction {} is not in (0, 1]", d.dim, d.fraction));
    out.dims[static_cast<std::size_t>(d.dim)].link_bandwidth_gbps *= d.fraction;
    out.name += fmt::format(" (dim {} at {:g})", d.dim, d.fraction);
  }
  validate(out, field);  // a bandwidth below the smallest the model takes
  return out;
}

}  // namespace chorus::net
