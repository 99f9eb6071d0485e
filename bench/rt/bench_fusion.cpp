// bench_fusion: tensor fusion (rt/fusion) against issuing the same operations one by one,
// side by side in one run (MCR-DL Sec. V-E). Per backend, per (B, T): --ops operations (--op:
// all-reduces (f32, sum), broadcasts from rank 0, all-gathers, reduce-scatters (f32, sum),
// all-to-alls of equal blocks, uneven all-to-alls (rank r sends rank j (1 + (r + j) % 3) / 2
// x --bytes), or reduces (f32, sum), gathers and scatters with root 0) of
// --bytes each (the part per rank: an all-gather's or gather's input, a reduce-scatter's or
// scatter's output, an all-to-all's block), timed from the first issue to the last completion,
// slowest rank;
// blocks of the three ways alternate, --reps times, medians reported:
//   blocking  each operation issued and waited for in turn
//   async     all issued asynchronously on the backend, then all waited for
//   fused     all issued asynchronously on a communicator given an rt::Fusion(B, T)
//             (rt::communicator(backend, options): the path the front ends take), then all waited for
// Results are checked (every element of every operation) in the first repetition.
// Run: chorus launch -n 2 -- bench_fusion [--backends shm,gloo] [--buffers 64KiB,1MiB] ...
//      mpirun -n 2 bench_fusion --backends mpi
// Prints CSV: op,backend,ranks,ops,bytes,B,T_us,blocking_ms,async_ms,fused_ms,speedup_vs_blocking,speedup_vs_async,buffers
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/split.h"
#include "core/units.h"
#include "rt/fusion/fusion.h"
#include "rt/runtime.h"

namespace rt = chorus::rt;
using rt::DType;
using rt::ReduceOp;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double slowest_ms(const std::string& backend, std::chrono::steady_clock::time_point t0) {
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  rt::all_reduce(backend, &ms, &ms, 1, DType::f64, ReduceOp::max);
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_fusion: fused operations of one kind against the same issued one by one"};
  std::string backends_arg = "shm,gloo", buffers_arg = "64KiB,256KiB,1MiB,4MiB", cycles_arg = "200";
  int ops = 1000, reps = 7;
  std::string bytes_arg = "4KiB", op_arg = "allreduce";
  app.add_option("--backends", backends_arg, "backends to measure, one after another");
  app.add_option("--buffers", buffers_arg, "values of B");
  app.add_option("--cycles-us", cycles_arg, "values of T (microseconds)");
  app.add_option("--ops", ops, "operations per measurement");
  app.add_option("--op", op_arg,
                 "allreduce, broadcast, allgather, reducescatter, alltoall, alltoallv (rank r sends rank j (1 + (r + "
                 "j) % 3) / 2 "
                 "x the bytes), reduce, gather or scatter")
      ->check(CLI::IsMember({"allreduce", "broadcast", "allgather", "reducescatter", "alltoall", "alltoallv", "reduce",
                             "gather", "scatter"}));
  app.add_option("--bytes", bytes_arg, "bytes per operation and rank");
  app.add_option("--reps", reps, "repetitions (medians reported)");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto backends = chorus::split_list(backends_arg);
    const std::size_t count = chorus::parse_bytes(bytes_arg, "--bytes") / sizeof(float);
    rt::init(backends);
    const int me = rt::rank("auto"), world = rt::size("auto");
    std::string backend_of_run;
    const bool gather = op_arg == "allgather", bcast = op_arg == "broadcast", rs = op_arg == "reducescatter",
               a2a = op_arg == "alltoall", red = op_arg == "reduce", gat = op_arg == "gather",
               sca = op_arg == "scatter", a2av = op_arg == "alltoallv";
    const std::size_t world_n = static_cast<std::size_t>(world), me_n = static_cast<std::size_t>(me);
    // alltoallv: rank r's block for rank j holds (count / 2) x (1 + (r + j) % 3) elements, blocks back to back.
    auto pair = [&](std::size_t r, std::size_t j) { return count / 2 * (1 + (r + j) % 3); };
    auto displs_of = [&](std::size_t r, bool sending) {
      rt::Counts d(world_n, 0);
      for (std::size_t j = 1; j < world_n; ++j) d[j] = d[j - 1] + (sending ? pair(r, j - 1) : pair(j - 1, r));
      return d;
    };
    rt::Counts v_send(world_n), v_recv(world_n);
    for (std::size_t j = 0; j < world_n; ++j) {
      v_send[j] = pair(me_n, j);
      v_recv[j] = pair(j, me_n);
    }
    const rt::Counts v_sdispl = displs_of(me_n, true), v_rdispl = displs_of(me_n, false);
    std::vector<std::size_t> v_from(world_n);  // where rank k's block for this rank starts in k's input
    for (std::size_t k = 0; k < world_n; ++k) v_from[k] = displs_of(k, true)[me_n];
    const std::size_t v_in = v_sdispl.back() + v_send.back(), v_out = v_rdispl.back() + v_recv.back();
    // Inputs of world x count elements for a reduce-scatter, an all-to-all and a scatter; results
    // apart from the input for all but the in-place all-reduce, broadcast and reduce.
    std::vector<std::vector<float>> data(static_cast<std::size_t>(ops),
                                         std::vector<float>(a2av               ? v_in
                                                            : rs || a2a || sca ? count * world_n
                                                                               : count));
    std::vector<std::vector<float>> results(gather || rs || a2a || a2av || gat || sca ? data.size() : 0,
                                            std::vector<float>(a2av        ? v_out
                                                               : rs || sca ? count
                                                                           : count * world_n));
    auto fill = [&] {
      for (std::size_t i = 0; i < data.size(); ++i)
        for (std::size_t e = 0; e < data[i].size(); ++e) data[i][e] = static_cast<float>((i + e) % 7 + me_n);
      for (auto& g : results) std::fill(g.begin(), g.end(), -1.0f);
    };
    std::int64_t wrong = 0;
    // What operation i holds at element e afterwards (rank r put (i+e)%7 + r at input element e):
    // the sum over ranks; rank 0's value; block j = rank j's input; the sum over ranks of element
    // me*count+e; block j = block `me` of rank j's input; element me*count+e of rank 0's input.
    // (A reduce and a gather are checked at the root, rank 0, only.)
    auto expected = [&](std::size_t i, std::size_t e) {
      if (a2av) {  // element e is in the block from rank k: rank k's input block for this rank
        std::size_t k = 0;
        while (k + 1 < world_n && v_rdispl[k + 1] <= e) ++k;
        return static_cast<float>((i + v_from[k] + e - v_rdispl[k]) % 7 + k);
      }
      if (gather || gat) return static_cast<float>((i + e % count) % 7 + e / count);
      if (sca) return static_cast<float>((i + me_n * count + e) % 7);
      if (bcast) return static_cast<float>((i + e) % 7);
      if (rs) return static_cast<float>(world * static_cast<int>((i + me_n * count + e) % 7) + world * (world - 1) / 2);
      if (a2a) return static_cast<float>((i + me_n * count + e % count) % 7 + e / count);
      return static_cast<float>(world * static_cast<int>((i + e) % 7) + world * (world - 1) / 2);
    };
    auto check = [&] {
      if ((red || gat) && me != 0) return;
      for (std::size_t i = 0; i < data.size(); ++i) {
        const auto& got = results.empty() ? data[i] : results[i];
        for (std::size_t e = 0; e < got.size(); ++e)
          if (got[e] != expected(i, e)) {
            ++wrong;
            return;
          }
      }
    };
    // Operation i, issued directly (async_op) or through the fusion.
    auto direct = [&](std::size_t i, bool async_op) {
      float* d = data[i].data();
      if (gather) return rt::all_gather(backend_of_run, d, results[i].data(), count, DType::f32, async_op);
      if (bcast) return rt::broadcast(backend_of_run, d, count, DType::f32, 0, async_op);
      if (rs)
        return rt::reduce_scatter(backend_of_run, d, results[i].data(), count, DType::f32, ReduceOp::sum, async_op);
      if (a2a) return rt::all_to_all_single(backend_of_run, d, results[i].data(), count, DType::f32, async_op);
      if (a2av)
        return rt::all_to_allv(backend_of_run, d, v_send, v_sdispl, results[i].data(), v_recv, v_rdispl, DType::f32,
                               async_op);
      if (red) return rt::reduce(backend_of_run, d, d, count, DType::f32, ReduceOp::sum, 0, async_op);
      if (gat) return rt::gather(backend_of_run, d, results[i].data(), count, DType::f32, 0, async_op);
      if (sca) return rt::scatter(backend_of_run, d, results[i].data(), count, DType::f32, 0, async_op);
      return rt::all_reduce(backend_of_run, d, d, count, DType::f32, ReduceOp::sum, async_op);
    };
    auto fused_op = [&](const rt::Communicator& comm, std::size_t i) {
      namespace calls = rt::calls;
      float* d = data[i].data();
      float* out = results.empty() ? d : results[i].data();
      const rt::Call call = gather  ? calls::all_gather(d, out, count, DType::f32)
                            : bcast ? calls::broadcast(d, count, DType::f32, 0)
                            : rs    ? calls::reduce_scatter(d, out, count, DType::f32, ReduceOp::sum)
                            : a2a   ? calls::all_to_all_single(d, out, count, DType::f32)
                            : a2av  ? calls::all_to_allv(d, v_send, v_sdispl, out, v_recv, v_rdispl, DType::f32)
                            : red   ? calls::reduce(d, d, count, DType::f32, ReduceOp::sum, 0)
                            : gat   ? calls::gather(d, out, count, DType::f32, 0)
                            : sca   ? calls::scatter(d, out, count, DType::f32, 0)
                                    : calls::all_reduce(d, d, count, DType::f32, ReduceOp::sum);
      return comm.issue(call, /*async_op=*/true);
    };
    if (me == 0)
      std::printf(
          "op,backend,ranks,ops,bytes,B,T_us,blocking_ms,async_ms,fused_ms,speedup_vs_blocking,speedup_vs_async,"
          "buffers\n");
    for (const auto& backend : backends) {
      backend_of_run = backend;
      for (const auto& b_text : chorus::split_list(buffers_arg)) {
        for (const auto& t_text : chorus::split_list(cycles_arg)) {
          const rt::FusionOptions options{
              .buffer_bytes = static_cast<std::size_t>(chorus::parse_bytes(b_text, "--buffers")),
              .cycle_us = std::stoll(t_text)};
          const rt::Communicator fused_comm = rt::communicator(backend, options);  // collective
          std::vector<double> blocking, async, fused;
          std::vector<rt::Work> works(static_cast<std::size_t>(ops));
          for (int r = 0; r < reps + 1; ++r) {  // repetition 0: warm-up, results checked
            fill();
            rt::barrier(backend);
            auto t0 = std::chrono::steady_clock::now();
            for (std::size_t i = 0; i < data.size(); ++i) direct(i, false);
            const double b_ms = slowest_ms(backend, t0);
            if (r == 0) check();
            fill();
            rt::barrier(backend);
            t0 = std::chrono::steady_clock::now();
            for (std::size_t i = 0; i < data.size(); ++i) works[i] = direct(i, true);
            for (auto& w : works) w.wait();
            const double a_ms = slowest_ms(backend, t0);
            if (r == 0) check();
            fill();
            rt::barrier(backend);
            t0 = std::chrono::steady_clock::now();
            for (std::size_t i = 0; i < data.size(); ++i) works[i] = fused_op(fused_comm, i);
            for (auto& w : works) w.wait();
            const double f_ms = slowest_ms(backend, t0);
            if (r == 0) check();
            if (r == 0) continue;
            blocking.push_back(b_ms);
            async.push_back(a_ms);
            fused.push_back(f_ms);
          }
          const auto st = fused_comm.fusion()->stats();
          if (me == 0)
            std::printf("%s,%s,%d,%d,%zu,%zu,%lld,%.3f,%.3f,%.3f,%.2f,%.2f,%.1f\n", op_arg.c_str(), backend.c_str(),
                        world, ops, count * sizeof(float), options.buffer_bytes,
                        static_cast<long long>(options.cycle_us), median(blocking), median(async), median(fused),
                        median(blocking) / median(fused), median(async) / median(fused),
                        static_cast<double>(st.buffers) / (reps + 1));
          std::fflush(stdout);
        }
      }
    }
    rt::all_reduce(backends.front(), &wrong, &wrong, 1, DType::i64, ReduceOp::sum);
    if (me == 0 && wrong != 0)
      std::fprintf(stderr, "bench_fusion: %lld wrong results\n", static_cast<long long>(wrong));
    rt::finalize();
    return wrong == 0 ? 0 : 1;
  } catch (const chorus::InputError& e) {
    std::fprintf(stderr, "bench_fusion: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_fusion: %s\n", e.what());
    return 1;
  }
}
