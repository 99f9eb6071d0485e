// The reference for the runtime's "gloo" backend: a plain Gloo program (libgloo-dev only, no
// chorus code) that all-reduces float32 sums over Gloo's TCP transport, bootstrapped through
// Gloo's own FileStore, timed the way `chorus bench` times (warm-ups, a barrier, then every
// iteration timed; per iteration the slowest rank's time; min / mean / max over iterations).
//
//   chorus launch -n 2 -- bench_gloo_plain --store DIR [--sizes 8,4096,...] [--iters N]
//       [--warmup N] [--algos ring,hd] [--device-any-cpu]
//   mpirun -n 2 bench_gloo_plain --store DIR ...
//
// The rank and world size come from chorus launch (CHORUS_RANK, CHORUS_WORLD_SIZE) or Open MPI
// (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE). DIR must be empty and shared by the ranks.
// Algorithms: "ring" is gloo::allreduce (the new API, what chorus's backend calls), "hd" is
// gloo::AllreduceHalvingDoubling (the classic algorithm object, in place; the copy from the
// input buffer is inside the timed region, as the out-of-place call has it).
#include <gloo/allreduce.h>
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/barrier.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <sched.h>

#include "plain_reference.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int env_int(const char* a, const char* b) {
  for (const char* name : {a, b}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  throw std::runtime_error(std::string("neither ") + a + " nor " + b + " is set (start with chorus launch or mpirun)");
}

void sum_f32(void* o, const void* a, const void* b, std::size_t n) {
  auto* out = static_cast<float*>(o);
  const auto* x = static_cast<const float*>(a);
  const auto* y = static_cast<const float*>(b);
  for (std::size_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
}

}  // namespace

int run(int argc, char** argv) {
  std::string store_dir, sizes = "8,64,512,4096,32768,65536,1048576,16777216", algos = "ring,hd";
  int iters = 50, warmup = 10;
  bool device_any_cpu = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--store")
      store_dir = value();
    else if (a == "--sizes")
      sizes = value();
    else if (a == "--iters")
      iters = std::stoi(value());
    else if (a == "--warmup")
      warmup = std::stoi(value());
    else if (a == "--algos")
      algos = value();
    else if (a == "--device-any-cpu")
      device_any_cpu = true;
    else {
      std::fprintf(stderr, "bench_gloo_plain: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  if (store_dir.empty() || iters < 1 || warmup < 0) {
    std::fprintf(stderr, "bench_gloo_plain: --store DIR is required; --iters >= 1, --warmup >= 0\n");
    return 2;
  }
  const int rank = env_int("CHORUS_RANK", "OMPI_COMM_WORLD_RANK");
  const int size = env_int("CHORUS_WORLD_SIZE", "OMPI_COMM_WORLD_SIZE");

  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  // --device-any-cpu: Gloo's device thread (started by CreateDevice) may run on any CPU even
  // when the launcher pinned this rank; the rank's own thread keeps its binding.
  cpu_set_t pinned;
  CPU_ZERO(&pinned);
  sched_getaffinity(0, sizeof pinned, &pinned);
  if (device_any_cpu) {
    cpu_set_t any;
    CPU_ZERO(&any);
    for (int c = 0; c < CPU_SETSIZE; ++c) CPU_SET(c, &any);
    sched_setaffinity(0, sizeof any, &any);
  }
  auto device = gloo::transport::tcp::CreateDevice(attr);
  sched_setaffinity(0, sizeof pinned, &pinned);
  gloo::rendezvous::FileStore file_store(store_dir);
  gloo::rendezvous::PrefixStore store("bench", file_store);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->connectFullMesh(store, device);

  std::uint32_t tag = 1;
  auto barrier = [&] {
    gloo::BarrierOptions opts(context);
    opts.setTag(tag++);
    gloo::barrier(opts);
  };
  // Per-iteration times, maximum over ranks (a ring all-reduce of doubles with max).
  auto slowest = [&](std::vector<double>& t) {
    gloo::AllreduceOptions opts(context);
    opts.setOutput(t.data(), t.size());
    opts.setReduceFunction([](void* o, const void* a, const void* b, std::size_t n) {
      auto* out = static_cast<double*>(o);
      for (std::size_t i = 0; i < n; ++i)
        out[i] = std::max(static_cast<const double*>(a)[i], static_cast<const double*>(b)[i]);
    });
    opts.setTag(tag++);
    gloo::allreduce(opts);
  };

  if (rank == 0) plain_reference::print_header();
  for (const auto& algo : plain_reference::split(algos)) {
    if (algo != "ring" && algo != "hd") {
      std::fprintf(stderr, "bench_gloo_plain: unknown algorithm '%s' (ring, hd)\n", algo.c_str());
      return 2;
    }
    for (const auto& s : plain_reference::split(sizes)) {
      const std::size_t bytes = std::stoull(s);
      const std::size_t count = std::max<std::size_t>(bytes / sizeof(float), 1);
      std::vector<float> in(count, 1.0f), out(count, 0.0f);
      std::unique_ptr<gloo::AllreduceHalvingDoubling<float>> hd;
      if (algo == "hd")
        hd = std::make_unique<gloo::AllreduceHalvingDoubling<float>>(context, std::vector<float*>{out.data()},
                                                                     static_cast<int>(count));
      auto once = [&] {
        if (hd) {
          std::memcpy(out.data(), in.data(), count * sizeof(float));
          hd->run();
          return;
        }
        gloo::AllreduceOptions opts(context);
        opts.setInput(in.data(), count);
        opts.setOutput(out.data(), count);
        opts.setReduceFunction(sum_f32);
        opts.setTag(tag++);
        gloo::allreduce(opts);
      };
      auto t = plain_reference::time_iterations(iters, warmup, once, barrier);
      if (out[0] != static_cast<float>(size)) {
        std::fprintf(stderr, "bench_gloo_plain: rank %d: wrong sum %g (expected %d)\n", rank, out[0], size);
        return 1;
      }
      slowest(t);
      if (rank == 0) plain_reference::print_row("gloo-" + algo, count * sizeof(float), size, t);
    }
  }
  barrier();
  return 0;
}

int main(int argc, char** argv) {
  // A value that does not parse (std::stoi) or is missing ends with a message, not std::terminate.
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gloo_plain: %s\n", e.what());
    return 2;
  }
}
