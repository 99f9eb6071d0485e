#include "sweep/point_key.h"

#include <fmt/format.h>

#include "core/fnv1a.h"

namespace chorus::sweep {

std::string point_key(const std::string& command, const Point& point) {
  Fnv1a h;
  const char nul = '\0';
  h.bytes(command.data(), command.size()).bytes(&nul, 1);
  for (const auto& [name, value] : point) {
    const std::string item = name + "=" + value.text;
    h.bytes(item.data(), item.size()).bytes(&nul, 1);
  }
  return fmt::format("{:016x}", h.digest());
}

}  // namespace chorus::sweep
