#include "core/memory_budget.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"

namespace chorus {
namespace {

std::string gib(double bytes) { return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024.0 * 1024.0)); }

}  // namespace

std::uint64_t memory_budget_bytes() {
  std::uint64_t budget = std::numeric_limits<std::uint64_t>::max();
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream in(line);
    std::string key;
    std::uint64_t kib = 0;
    if (in >> key >> kib && key == "MemAvailable:") budget = kib * 1024;
  }
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    budget = std::min<std::uint64_t>(budget, as.rlim_cur);
  return budget;
}

void require_memory(double estimate_bytes, const std::string& field, const std::string& what) {
  const auto budget = static_cast<double>(memory_budget_bytes());
  if (estimate_bytes > budget)
    throw InputError(field, fmt::format("{} needs about {}, more than the {} this machine can give (available memory, "
                                        "ulimit -v)",
                                        what, gib(estimate_bytes), gib(budget)));
}

void require_range(long long value, long long lo, long long hi, const std::string& field) {
  if (value < lo || value > hi) throw InputError(field, fmt::format("must be in {}..{}, got {}", lo, hi, value));
}

}  // namespace chorus
