#include "rt/schedule/dim_backends.h"

#include <algorithm>
#include <fmt/format.h>
#include <limits>

#include "core/error.h"

namespace chorus::rt {

std::vector<std::vector<DimCall>> dim_calls(const sched::Schedule& schedule, const std::vector<int>& dims) {
  std::vector<std::vector<DimCall>> calls(dims.size());
  double all = 1;
  for (int p : dims) all *= p;
  for (const auto& chunk : schedule.chunks) {
    // An all-gather's chunk starts as this rank's piece; the others start whole.
    double bytes = schedule.chunk_bytes() / (schedule.op == CollectiveKind::kAllGather ? all : 1.0);
    for (const auto& st : chunk.stages) {
      if (st.dim < 0 || static_cast<std::size_t>(st.dim) >= dims.size())
        throw InputError("schedule",
                         fmt::format("a stage names dimension {} of a {}-dimension grid", st.dim + 1, dims.size()));
      const double p = dims[static_cast<std::size_t>(st.dim)];
      if (st.phase == coll::Phase::kAllToAll) {  // the chunk stays whole, its slots move
        calls[static_cast<std::size_t>(st.dim)].push_back({CollectiveKind::kAllToAll, bytes});
      } else if (st.phase == coll::Phase::kReduceScatter) {
        calls[static_cast<std::size_t>(st.dim)].push_back({CollectiveKind::kReduceScatter, bytes});
        bytes /= p;
      } else {
        bytes *= p;
        calls[static_cast<std::size_t>(st.dim)].push_back({CollectiveKind::kAllGather, bytes});
      }
    }
  }
  return calls;
}

std::vector<DimBackendChoice> choose_dim_backends(const sched::Schedule& schedule, const std::vector<int>& dims,
                                                  const std::vector<std::string>& requested, const TuningTable* table,
                                                  const std::vector<std::string>& initialised) {
  if (requested.size() != 1 && requested.size() != dims.size())
    throw InputError("dim_backends", fmt::format("{} backends given for {} dimensions (give one, or one per dimension)",
                                                 requested.size(), dims.size()));
  if (initialised.empty()) throw InputError("dim_backends", "no backend is initialised");
  const auto calls = dim_calls(schedule, dims);
  std::vector<DimBackendChoice> out(dims.size());
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::string& want = requested.size() == 1 ? requested[0] : requested[d];
    DimBackendChoice& c = out[d];
    if (want != "auto") {
      c.backend = want;
      c.chosen_by = "given";
      continue;
    }
    double best = std::numeric_limits<double>::infinity();
    for (const auto& b : initialised) {
      if (table == nullptr) break;
      double sum = 0;
      bool complete = true;
      for (const auto& call : calls[d]) {
        const auto t = table->estimate_us(call.op, dims[d], call.bytes, b);
        if (!t) {
          complete = false;
          break;
        }
        sum += *t;
      }
      if (!complete) continue;
      c.estimate_us[b] = sum;
      if (sum < best) {  // ties: the earlier backend in the runtime's preference order
        best = sum;
        c.backend = b;
      }
    }
    if (!c.backend.empty()) {
      c.chosen_by = "tuning table";
    } else {
      c.backend = initialised.front();
      c.chosen_by = table == nullptr
                        ? "default (no tuning table: CHORUS_RT_TUNING)"
                        : fmt::format(
                              "default (the tuning table has no rows at world size {} for this dimension's "
                              "operations with any initialised backend)",
                              dims[d]);
    }
  }
  return out;
}

}  // namespace chorus::rt
