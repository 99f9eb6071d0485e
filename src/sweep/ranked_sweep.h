#pragma once
// A sweep on one process, or split across the ranks of an MPI job (started by mpirun: Open MPI's
// OMPI_COMM_WORLD_SIZE > 1). Under MPI, rank 0 alone opens the database: it sends the keys done
// to every rank, writes its own rows, and receives the other ranks' rows as they finish (each
// row whole, in its own transaction); a rank that dies leaves its points not done, to be run by
// the next run of the same sweep.
#include <cstddef>
#include <memory>
#include <string>

#include "sweep/result_db.h"
#include "sweep/run_sweep.h"

namespace chorus::sweep {

struct RankedSweep {
  std::unique_ptr<ResultDb> writer;  // rank 0 (or the only process): the database, still open
  int ranks = 1;
  std::size_t ran = 0;      // points run now, on every rank
  std::size_t already = 0;  // points in the database before
  bool stopped = false;     // some rank was stopped (Ctrl-C) before its share was done
};

RankedSweep run_ranked_sweep(const Spec& spec, const std::string& db_path, const PointRunner& runner,
                             const SweepOptions& options);

}  // namespace chorus::sweep
