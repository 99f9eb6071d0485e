#include "sim/jobs/placement.h"

#include <algorithm>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "core/error.h"
#include "core/rng.h"
#include "net/graph/routing.h"

namespace chorus::sim::jobs {
namespace {

[[noreturn]] void placement_error(const JobSpec& job, const std::string& what) {
  throw InputError(job.placement_at, fmt::format("job '{}': {}", job.name, what));
}

// Hops from `root` to every node along the router's BFS tree (-1: unreachable).
std::vector<int> hops_from(const net::GraphNetwork& fabric, const net::Router& router, int root) {
  const auto& parent = router.tree(root);
  std::vector<int> hops(parent.size(), -1);
  hops[static_cast<std::size_t>(root)] = 0;
  for (std::size_t v = 0; v < parent.size(); ++v) {
    int n = 0;
    int u = static_cast<int>(v);
    while (u != root && parent[static_cast<std::size_t>(u)] >= 0) {
      u = fabric.links[static_cast<std::size_t>(parent[static_cast<std::size_t>(u)])].from;
      ++n;
    }
    if (u == root) hops[v] = n;
  }
  return hops;
}

}  // namespace

std::vector<std::vector<int>> place_jobs(const std::vector<JobSpec>& jobs, const net::GraphNetwork& fabric) {
  std::vector<std::vector<int>> placed(jobs.size());
  std::vector<int> owner(static_cast<std::size_t>(fabric.servers), -1);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto& job = jobs[j];
    if (job.npus > fabric.servers)
      placement_error(job,
                      fmt::format("{} NPUs but fabric '{}' has {} servers", job.npus, fabric.name, fabric.servers));
    if (job.policy != PlacementPolicy::kExplicit) continue;
    for (std::size_t k = 0; k < job.servers.size(); ++k) {
      const int s = job.servers[k];
      if (s < 0 || s >= fabric.servers)
        placement_error(job, fmt::format("placement[{}]: {} is not a server of fabric '{}' (0..{})", k, s, fabric.name,
                                         fabric.servers - 1));
      int& o = owner[static_cast<std::size_t>(s)];
      if (o == static_cast<int>(j)) placement_error(job, fmt::format("placement[{}]: server {} is listed twice", k, s));
      if (o >= 0)
        placement_error(job, fmt::format("placement[{}]: server {} is also job '{}''s (placements overlap)", k, s,
                                         jobs[static_cast<std::size_t>(o)].name));
      o = static_cast<int>(j);
    }
    placed[j] = job.servers;
  }
  std::unique_ptr<net::Router> router;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto& job = jobs[j];
    if (job.policy == PlacementPolicy::kExplicit) continue;
    std::vector<int> free;
    for (int s = 0; s < fabric.servers; ++s)
      if (owner[static_cast<std::size_t>(s)] < 0) free.push_back(s);
    if (static_cast<int>(free.size()) < job.npus)
      placement_error(job,
                      fmt::format("{} NPUs but only {} of fabric '{}''s {} servers are left free by the jobs before it",
                                  job.npus, free.size(), fabric.name, fabric.servers));
    auto& mine = placed[j];
    switch (job.policy) {
      case PlacementPolicy::kExplicit:
      case PlacementPolicy::kContiguous:
        mine.assign(free.begin(), free.begin() + job.npus);
        break;
      case PlacementPolicy::kRandom: {
        Rng rng(job.seed);
        for (int k = 0; k < job.npus; ++k)
          std::swap(free[static_cast<std::size_t>(k)],
                    free[static_cast<std::size_t>(rng.uniform_int(k, static_cast<std::int64_t>(free.size()) - 1))]);
        mine.assign(free.begin(), free.begin() + job.npus);
        std::sort(mine.begin(), mine.end());
        break;
      }
      case PlacementPolicy::kTopologyAware: {
        // Every free server as the anchor; the job takes the anchor's nearest free servers. The anchor
        // whose farthest pick is nearest wins (then the fewest hops in all, then the lowest anchor).
        if (!router) router = std::make_unique<net::Router>(fabric);
        std::pair<int, long long> best{0, 0};
        for (std::size_t a = 0; a < free.size(); ++a) {
          const auto hops = hops_from(fabric, *router, free[a]);
          const auto distance = [&](int s) {
            const int h = hops[static_cast<std::size_t>(s)];
            return h < 0 ? fabric.servers + fabric.switches : h;
          };
          auto order = free;
          std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return distance(x) < distance(y); });
          order.resize(static_cast<std::size_t>(job.npus));
          long long sum = 0;
          for (int s : order) sum += distance(s);
          const std::pair<int, long long> score{distance(order.back()), sum};
          if (a == 0 || score < best) {
            best = score;
            mine = std::move(order);
          }
        }
        std::sort(mine.begin(), mine.end());
        break;
      }
    }
    for (int s : mine) owner[static_cast<std::size_t>(s)] = static_cast<int>(j);
  }
  return placed;
}

}  // namespace chorus::sim::jobs
