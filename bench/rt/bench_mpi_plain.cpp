// The reference for the runtime's "mpi" backend and for shm's "against Open MPI" rows: a plain
// MPI program (Open MPI only, no chorus code) that all-reduces float32 sums with MPI_Allreduce,
// timed the way `chorus bench` and bench_gloo_plain time (warm-ups, a barrier, then every
// iteration timed; per iteration the slowest rank's time; min / mean / max over iterations).
// chorus's own mpi backend pays its agreement exchange before each collective; this does not.
//
//   mpirun -n 2 bench_mpi_plain [--sizes 8,4096,...] [--iters N] [--warmup N]
//
// Prints one row per size in bench_gloo_plain's columns, impl "mpi-plain".
#include <mpi.h>

#include "plain_reference.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace {

int run(int argc, char** argv, int rank, int size) {
  std::string sizes = "8,64,512,4096,32768,65536";
  int iters = 20000, warmup = 2000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 < argc && a == "--sizes") {
      sizes = argv[++i];
    } else if (i + 1 < argc && a == "--iters") {
      iters = std::stoi(argv[++i]);
    } else if (i + 1 < argc && a == "--warmup") {
      warmup = std::stoi(argv[++i]);
    } else {
      if (rank == 0) std::fprintf(stderr, "bench_mpi_plain: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  if (iters < 1 || warmup < 0) {
    if (rank == 0) std::fprintf(stderr, "bench_mpi_plain: --iters >= 1, --warmup >= 0\n");
    return 2;
  }
  if (rank == 0) plain_reference::print_header();
  for (const auto& s : plain_reference::split(sizes)) {
    const std::size_t count = std::max<std::size_t>(std::stoull(s) / sizeof(float), 1);
    std::vector<float> in(count, 1.0f), out(count, 0.0f);
    const auto once = [&] {
      MPI_Allreduce(in.data(), out.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    };
    auto t = plain_reference::time_iterations(iters, warmup, once, [] { MPI_Barrier(MPI_COMM_WORLD); });
    if (out[0] != static_cast<float>(size)) {
      std::fprintf(stderr, "bench_mpi_plain: rank %d: wrong sum %g (expected %d)\n", rank, static_cast<double>(out[0]),
                   size);
      return 1;
    }
    // Per iteration, the slowest rank's time.
    MPI_Allreduce(MPI_IN_PLACE, t.data(), iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) plain_reference::print_row("mpi-plain", count * sizeof(float), size, t);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int status = 2;
  try {
    status = run(argc, argv, rank, size);
  } catch (const std::exception& e) {  // a value that does not parse (std::stoi)
    std::fprintf(stderr, "bench_mpi_plain: %s\n", e.what());
  }
  MPI_Finalize();
  return status;
}
