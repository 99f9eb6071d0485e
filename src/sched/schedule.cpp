#include "sched/schedule.h"

namespace chorus::sched {

std::string_view to_string(IntraDimPolicy policy) {
  switch (policy) {
    case IntraDimPolicy::kFifo:
      return "fifo";
    case IntraDimPolicy::kSmallestChunkFirst:
      return "scf";
    case IntraDimPolicy::kLifo:
      return "lifo";
  }
  return "?";
}

std::vector<int> ChunkSchedule::order(coll::Phase phase) const {
  std::vector<int> dims;
  for (const auto& s : stages)
    if (s.phase == phase) dims.push_back(s.dim);
  return dims;
}

}  // namespace chorus::sched
