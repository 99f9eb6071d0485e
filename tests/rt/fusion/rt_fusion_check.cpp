// rt_fusion_check: tensor fusion (rt/fusion) on real ranks. Thousands of all-reduces,
// broadcasts, reduces, gathers and scatters (of random roots; the buffers a non-root does not
// use passed as null), all-gathers, reduce-scatters, all-to-alls and uneven all-to-alls (a count
// per pair, blocks apart by a gap that must stay untouched) of random backend (auto among them), dtype,
// reduce op and size — some larger than the buffer, some empty, some in place — submitted in bursts with random pauses (so cycles cut the stream at different
// places on different ranks), waited for in a random order that differs per rank; every result
// checked element by element against the reference of the self-check (small integers: exact in
// every dtype). Then: operations that differ across ranks must fail with an InputError on every
// rank, and the fusion stays usable afterwards; a burst of one kind (all-reduces, then
// all-gathers) must run as far fewer operations. Exit 1 on any failure. Start with `chorus launch -n 4 -- rt_fusion_check ...` or mpirun.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "core/split.h"
#include "rt/dtype.h"
#include "rt/fusion/fusion.h"
#include "rt/runtime.h"
#include "rt_bench/selfcheck.h"

using chorus::CollectiveKind;

namespace rt_fusion_check_program {  // one of the programs of rt_programs.cpp

namespace rt = chorus::rt;
using chorus::rt::DType;
using chorus::rt::ReduceOp;

namespace {

struct Op {
  CollectiveKind kind;
  int root;
  std::string backend;
  DType dtype;
  ReduceOp rop;
  std::size_t count;
  bool in_place;
  std::uint64_t salt;
  std::vector<char> in, out;
  std::vector<std::size_t> send_counts, send_displs, recv_counts, recv_displs;  // all_to_allv, elements
  rt::Work work;
};

// An uneven all-to-all's block from rank i to rank j, known to every rank: `max` elements to
// itself (so that an operation past the buffer runs alone), 0..max to the others.
std::size_t pair_count(std::uint64_t salt, int i, int j, std::size_t max) {
  if (i == j) return max;
  std::uint64_t h = salt ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(i + 1)) ^
                    (0xbf58476d1ce4e5b9ULL * static_cast<std::uint64_t>(j + 7));
  h ^= h >> 31;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 29;
  return static_cast<std::size_t>(h % (max + 1));
}

// Block displacements of rank `from`'s input (to every rank) or of rank `to`'s output (from every
// rank): the blocks in rank order, one element of gap after each.
std::vector<std::size_t> pair_displs(std::uint64_t salt, int from, int to, int world, std::size_t max, bool sending) {
  std::vector<std::size_t> d;
  std::size_t at = 0;
  for (int k = 0; k < world; ++k) {
    d.push_back(at);
    at += (sending ? pair_count(salt, from, k, max) : pair_count(salt, k, to, max)) + 1;
  }
  return d;
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"rt_fusion_check: fused operations of every kind checked against the reference"};
  std::string backends_arg = "shm,gloo";
  int ops = 3000;
  std::uint64_t seed = 20261123;
  std::size_t buffer_bytes = 1 << 20, max_count = 2000;
  std::int64_t cycle_us = 200;
  app.add_option("--backends", backends_arg, "comma-separated backends (auto is added to the choices)");
  app.add_option("--ops", ops, "number of operations");
  app.add_option("--seed", seed, "seed shared by all ranks");
  app.add_option("--buffer-bytes", buffer_bytes, "the fusion's B");
  app.add_option("--cycle-us", cycle_us, "the fusion's T");
  app.add_option("--max-count", max_count, "largest element count of a small operation");
  CLI11_PARSE(app, argc, argv);
  std::int64_t failures = 0;
  try {
    const auto backends = chorus::split_list(backends_arg);
    rt::init(backends);
    const int me = rt::rank("auto"), world = rt::size("auto");
    chorus::Rng shared(seed);
    chorus::Rng local(seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(me + 1)));
    std::vector<std::string> choices = backends;
    choices.push_back("auto");
    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t burst_ops = 0, burst_buffers = 0, gather_ops = 0, gather_buffers = 0, buffers = 0, cycles = 0;
    {
      rt::Fusion fusion(backends, {.buffer_bytes = buffer_bytes, .cycle_us = cycle_us});
      int done = 0;
      while (done < ops) {
        const int n = std::min<int>(static_cast<int>(shared.uniform_int(1, 400)), ops - done);
        std::vector<Op> batch(static_cast<std::size_t>(n));
        for (auto& o : batch) {
          constexpr CollectiveKind kKinds[] = {
              CollectiveKind::kAllReduce,      CollectiveKind::kAllReduce, CollectiveKind::kAllReduce,
              CollectiveKind::kBroadcast,      CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
              CollectiveKind::kAllToAllSingle, CollectiveKind::kReduce,    CollectiveKind::kGather,
              CollectiveKind::kScatter,        CollectiveKind::kAllToAllv};
          o.kind = kKinds[shared.uniform_int(0, std::size(kKinds) - 1)];
          o.root = static_cast<int>(shared.uniform_int(0, world - 1));
          o.backend =
              choices[static_cast<std::size_t>(shared.uniform_int(0, static_cast<std::int64_t>(choices.size()) - 1))];
          o.dtype = rt::kAllDTypes[shared.uniform_int(0, std::size(rt::kAllDTypes) - 1)];
          o.rop = rt::kAllReduceOps[shared.uniform_int(0, std::size(rt::kAllReduceOps) - 1)];
          o.count = static_cast<std::size_t>(shared.uniform_int(0, static_cast<std::int64_t>(max_count)));
          const std::int64_t shape = shared.uniform_int(0, 49);
          if (shape == 0) o.count = 0;
          if (shape == 1) o.count = buffer_bytes / rt::dtype_bytes(o.dtype) + 1 + o.count;  // larger than B: alone
          o.in_place = o.kind == CollectiveKind::kBroadcast ||
                       ((o.kind == CollectiveKind::kAllReduce || o.kind == CollectiveKind::kReduce) &&
                        shared.uniform_int(0, 1) == 1);
          o.salt = shared.next();
          // count is per rank: the input holds a block per rank for a reduce-scatter, an
          // all-to-all or a scatter, the output for an all-gather, an all-to-all or a gather. A
          // scatter's input, a reduce's and a gather's output exist at the root only.
          const std::size_t bytes = o.count * rt::dtype_bytes(o.dtype), ranks = static_cast<std::size_t>(world);
          const bool wide_in = o.kind == CollectiveKind::kReduceScatter || o.kind == CollectiveKind::kAllToAllSingle ||
                               o.kind == CollectiveKind::kScatter;
          const bool wide_out = o.kind == CollectiveKind::kAllGather || o.kind == CollectiveKind::kAllToAllSingle ||
                                o.kind == CollectiveKind::kGather;
          const bool has_in = o.kind != CollectiveKind::kScatter || me == o.root;
          const bool has_out =
              !o.in_place && ((o.kind != CollectiveKind::kReduce && o.kind != CollectiveKind::kGather) || me == o.root);
          if (o.kind == CollectiveKind::kAllToAllv) {  // a count per pair, at most o.count
            for (int k = 0; k < world; ++k) {
              o.send_counts.push_back(pair_count(o.salt, me, k, o.count));
              o.recv_counts.push_back(pair_count(o.salt, k, me, o.count));
            }
            o.send_displs = pair_displs(o.salt, me, me, world, o.count, true);
            o.recv_displs = pair_displs(o.salt, me, me, world, o.count, false);
            const std::size_t esize = rt::dtype_bytes(o.dtype);
            o.in.resize((o.send_displs.back() + o.send_counts.back() + 1) * esize);
            o.out.assign((o.recv_displs.back() + o.recv_counts.back() + 1) * esize, 0);
          } else if (has_in) {
            o.in.resize(wide_in ? bytes * ranks : bytes);
          }
          for (std::size_t i = 0; i < o.in.size() / rt::dtype_bytes(o.dtype); ++i)
            rt::store_from_double(o.dtype, o.in.data(), i,
                                  rt::selfcheck::input_value(me, i, o.dtype, o.rop, false, o.salt));
          if (has_out && o.kind != CollectiveKind::kAllToAllv) o.out.assign(wide_out ? bytes * ranks : bytes, 0);
        }
        // Submit, now and then pausing (a different pause on every rank).
        for (auto& o : batch) {
          void* out = o.in_place ? o.in.data() : o.out.empty() ? nullptr : o.out.data();
          const void* in = o.in.empty() ? nullptr : o.in.data();
          switch (o.kind) {
            case CollectiveKind::kReduce:
              o.work = fusion.reduce(o.backend, in, out, o.count, o.dtype, o.rop, o.root);
              break;
            case CollectiveKind::kGather:
              o.work = fusion.gather(o.backend, in, out, o.count, o.dtype, o.root);
              break;
            case CollectiveKind::kScatter:
              o.work = fusion.scatter(o.backend, in, out, o.count, o.dtype, o.root);
              break;
            case CollectiveKind::kBroadcast:
              o.work = fusion.broadcast(o.backend, out, o.count, o.dtype, o.root);
              break;
            case CollectiveKind::kAllGather:
              o.work = fusion.all_gather(o.backend, o.in.data(), out, o.count, o.dtype);
              break;
            case CollectiveKind::kReduceScatter:
              o.work = fusion.reduce_scatter(o.backend, o.in.data(), out, o.count, o.dtype, o.rop);
              break;
            case CollectiveKind::kAllToAllSingle:
              o.work = fusion.all_to_all_single(o.backend, o.in.data(), out, o.count, o.dtype);
              break;
            case CollectiveKind::kAllToAllv:
              o.work = fusion.all_to_allv(o.backend, in, o.send_counts, o.send_displs, out, o.recv_counts,
                                          o.recv_displs, o.dtype);
              break;
            default:
              o.work = fusion.all_reduce(o.backend, o.in.data(), out, o.count, o.dtype, o.rop);
          }
          if (local.uniform_int(0, 99) == 0)
            std::this_thread::sleep_for(std::chrono::microseconds(local.uniform_int(0, 3 * cycle_us)));
        }
        std::vector<std::size_t> wait_order(batch.size());
        for (std::size_t i = 0; i < wait_order.size(); ++i) wait_order[i] = i;
        for (std::size_t i = wait_order.size(); i > 1; --i)
          std::swap(wait_order[i - 1],
                    wait_order[static_cast<std::size_t>(local.uniform_int(0, static_cast<std::int64_t>(i) - 1))]);
        for (std::size_t i : wait_order) {
          Op& o = batch[i];
          o.work.wait();
          // A reduce's and a gather's non-roots get nothing.
          if ((o.kind == CollectiveKind::kReduce || o.kind == CollectiveKind::kGather) && me != o.root) continue;
          const char* got = o.in_place ? o.in.data() : o.out.data();
          if (o.kind ==
              CollectiveKind::kAllToAllv) {  // block from rank k: rank k's input block for this rank; gaps stay 0
            const std::size_t cells = o.out.size() / rt::dtype_bytes(o.dtype);
            std::vector<double> want(cells, 0.0);
            for (int k = 0; k < world; ++k) {
              const std::size_t from_at = pair_displs(o.salt, k, k, world, o.count, true)[static_cast<std::size_t>(me)];
              for (std::size_t e = 0; e < o.recv_counts[static_cast<std::size_t>(k)]; ++e)
                want[o.recv_displs[static_cast<std::size_t>(k)] + e] =
                    rt::selfcheck::input_value(k, from_at + e, o.dtype, o.rop, false, o.salt);
            }
            for (std::size_t e = 0; e < cells; ++e) {
              char cell[8];
              rt::store_from_double(o.dtype, cell, 0, want[e]);
              if (rt::load_as_double(o.dtype, cell, 0) != rt::load_as_double(o.dtype, got, e)) {
                if (failures < 10)
                  std::fprintf(
                      stderr,
                      "rank %d: fused all_to_allv #%d (%s, up to %zu x %s per pair): element %zu is %g, expected %g\n",
                      me, done + static_cast<int>(i), o.backend.c_str(), o.count,
                      std::string(rt::to_string(o.dtype)).c_str(), e, rt::load_as_double(o.dtype, got, e),
                      rt::load_as_double(o.dtype, cell, 0));
                ++failures;
                break;
              }
            }
            continue;
          }
          const std::size_t out_count = o.out.empty() ? o.count : o.out.size() / rt::dtype_bytes(o.dtype);
          const std::size_t mine = static_cast<std::size_t>(me) * o.count;  // this rank's block of a wide input
          for (std::size_t e = 0; e < out_count; ++e) {
            // The reference rounded into the dtype, as the self-check compares (an average over 3
            // ranks is not exact in any dtype). Rank r's input element i is input_value(r, i).
            const std::size_t at = e % std::max<std::size_t>(o.count, 1);
            const int from = static_cast<int>(e / std::max<std::size_t>(o.count, 1));  // block of a wide output
            double ref = 0;
            switch (o.kind) {
              case CollectiveKind::kBroadcast:
                ref = rt::selfcheck::input_value(o.root, at, o.dtype, o.rop, false, o.salt);
                break;
              case CollectiveKind::kAllGather:
              case CollectiveKind::kGather:
                ref = rt::selfcheck::input_value(from, at, o.dtype, o.rop, false, o.salt);
                break;
              case CollectiveKind::kScatter:
                ref = rt::selfcheck::input_value(o.root, mine + at, o.dtype, o.rop, false, o.salt);
                break;
              case CollectiveKind::kReduceScatter:
                ref = rt::selfcheck::reduced_value(world, mine + at, o.dtype, o.rop, o.salt);
                break;
              case CollectiveKind::kAllToAllSingle:
                ref = rt::selfcheck::input_value(from, mine + at, o.dtype, o.rop, false, o.salt);
                break;
              default:
                ref = rt::selfcheck::reduced_value(world, at, o.dtype, o.rop, o.salt);
            }
            char cell[8];
            rt::store_from_double(o.dtype, cell, 0, ref);
            const double want = rt::load_as_double(o.dtype, cell, 0);
            const double have = rt::load_as_double(o.dtype, got, e);
            if (want != have) {
              if (failures < 10)
                std::fprintf(stderr,
                             "rank %d: fused %s #%d (%s, %zu x %s, %s, root %d): element %zu is %g, expected %g\n", me,
                             std::string(rt::to_string(o.kind)).c_str(), done + static_cast<int>(i), o.backend.c_str(),
                             o.count, std::string(rt::to_string(o.dtype)).c_str(),
                             std::string(rt::to_string(o.rop)).c_str(), o.root, e, have, want);
              ++failures;
              break;
            }
          }
        }
        done += n;
      }
      // Ranks disagreeing: rank 0 submits a different count. Every rank must get an InputError
      // for that cycle's operations — never a hang or a wrong sum.
      fusion.flush();
      std::vector<float> a(64, 1.0f);
      const std::size_t count = me == 0 ? 63 : 64;
      rt::Work bad = fusion.all_reduce(backends.front(), a.data(), a.data(), count, DType::f32, ReduceOp::sum);
      bool refused = false;
      try {
        bad.wait();
      } catch (const chorus::InputError& e) {
        refused = std::string(e.what()).find("different operations") != std::string::npos;
        if (!refused) std::fprintf(stderr, "rank %d: unexpected message: %s\n", me, e.what());
      }
      if (!refused) {
        std::fprintf(stderr, "rank %d: mismatched operations were not refused\n", me);
        ++failures;
      }
      // ... and the fusion still works afterwards.
      std::vector<std::int32_t> b(10, me + 1);
      fusion.all_reduce("auto", b.data(), b.data(), b.size(), DType::i32, ReduceOp::sum).wait();
      if (b[9] != world * (world + 1) / 2) {
        std::fprintf(stderr, "rank %d: after the refusal: %d, expected %d\n", me, b[9], world * (world + 1) / 2);
        ++failures;
      }
      // A burst of one kind (f32 sums, as gradients are): fused into far fewer all-reduces. (The
      // random mix above has 120 kinds, which rarely share a buffer.)
      const auto before = fusion.stats();
      std::vector<std::vector<float>> grads(1000, std::vector<float>(100, static_cast<float>(me)));
      std::vector<rt::Work> works;
      for (auto& g : grads)
        works.push_back(fusion.all_reduce(backends.front(), g.data(), g.data(), g.size(), DType::f32, ReduceOp::sum));
      for (auto& w : works) w.wait();
      for (const auto& g : grads)
        if (g[99] != static_cast<float>(world * (world - 1) / 2)) {
          std::fprintf(stderr, "rank %d: burst: %g, expected %d\n", me, static_cast<double>(g[99]),
                       world * (world - 1) / 2);
          ++failures;
          break;
        }
      const auto mid = fusion.stats();
      // ... and all-gathers of one kind (f32 activations).
      std::vector<std::vector<float>> parts(1000, std::vector<float>(25, static_cast<float>(me)));
      std::vector<std::vector<float>> gathered(1000, std::vector<float>(25 * static_cast<std::size_t>(world), -1.0f));
      works.clear();
      for (std::size_t i = 0; i < parts.size(); ++i)
        works.push_back(fusion.all_gather(backends.front(), parts[i].data(), gathered[i].data(), 25, DType::f32));
      for (auto& w : works) w.wait();
      for (const auto& g : gathered)
        for (std::size_t e = 0; e < g.size(); ++e)
          if (g[e] != static_cast<float>(e / 25)) {
            std::fprintf(stderr, "rank %d: all-gather burst: element %zu is %g, expected %zu\n", me, e,
                         static_cast<double>(g[e]), e / 25);
            ++failures;
            break;
          }
      const auto after = fusion.stats();
      burst_ops = mid.ops - before.ops;
      burst_buffers = mid.buffers - before.buffers;
      gather_ops = after.ops - mid.ops;
      gather_buffers = after.buffers - mid.buffers;
      buffers = after.buffers;
      cycles = after.cycles;
    }
    if (!(burst_buffers < burst_ops / 4)) {
      std::fprintf(stderr, "rank %d: %llu operations of one kind ran as %llu all-reduces: not fused\n", me,
                   static_cast<unsigned long long>(burst_ops), static_cast<unsigned long long>(burst_buffers));
      ++failures;
    }
    if (!(gather_buffers < gather_ops / 4)) {
      std::fprintf(stderr, "rank %d: %llu all-gathers of one kind ran as %llu operations: not fused\n", me,
                   static_cast<unsigned long long>(gather_ops), static_cast<unsigned long long>(gather_buffers));
      ++failures;
    }
    std::int64_t total = failures;
    rt::all_reduce(backends.front(), &total, &total, 1, DType::i64, ReduceOp::sum);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (me == 0)
      std::printf(
          "rt_fusion_check: %d ranks, %d operations on %s (+auto), B = %zu, T = %lld us: %llu fused operations in %llu "
          "cycles (a burst of %llu f32 sums: %llu; of %llu all-gathers: %llu), %.2f s, %lld failures\n",
          world, ops, backends_arg.c_str(), buffer_bytes, static_cast<long long>(cycle_us),
          static_cast<unsigned long long>(buffers), static_cast<unsigned long long>(cycles),
          static_cast<unsigned long long>(burst_ops), static_cast<unsigned long long>(burst_buffers),
          static_cast<unsigned long long>(gather_ops), static_cast<unsigned long long>(gather_buffers), s,
          static_cast<long long>(total));
    rt::finalize();
    return total == 0 ? 0 : 1;
  } catch (const chorus::InputError& e) {
    std::fprintf(stderr, "rt_fusion_check: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rt_fusion_check: %s\n", e.what());
    return 1;
  }
}

}  // namespace rt_fusion_check_program
