#pragma once
// The schedule executor: runs a Themis chunk schedule (sched::Schedule) of an all-reduce,
// reduce-scatter, all-gather or all-to-all on real ranks arranged as a RankGrid. Every chunk's stages run
// in the chunk's order on the group of their dimension, over the chunk's byte range of the
// user's buffer; one thread per dimension takes that dimension's stages strictly in the
// schedule's dim_order (Themis Sec. 4.6.2), so every rank issues the same operations in the
// same order on every group and dimensions progress at once. An order that would deadlock is
// rejected before anything runs.
//
// Layout. A chunk of E elements (a multiple of the world size N) is split like the
// hierarchical algorithm splits it: a reduce-scatter stage on dimension d cuts the rank's
// current range into P_d parts and keeps part c_d, an all-gather stage undoes one cut; the
// cuts nest in the order of the chunk's reduce-scatter stages (all-gather: the reverse of its
// all-gather stages). Stages alternate between the user's buffer and a scratch buffer of the
// same size (out-of-place collectives, no extra copies), arranged so that results end in the
// user's buffer. An all-reduce whose element count is not a multiple of chunks x N runs its
// last (count mod chunks*N) elements as one flat all-reduce on `tail_backend`; reduce-scatter,
// all-gather and all-to-all need a multiple.
//
// All-to-all (the standard layout: N blocks, block j to / from rank j): chunk c is piece c of
// every block. Each stage on dimension d is one all_to_all on the dimension's group that moves
// every piece one step closer to its destination (the coordinate d of where it sits becomes the
// destination's); after the chunk's D stages, in any order, every piece is home. The pieces
// are packed per peer in a scratch buffer (details at permute_by_digit in the .cpp).
//
// Emulation (optional): each stage is paced to the network model of the simulator, on the
// model's clock — it begins when the model begins it (A_K after its chunk arrived, overlapping
// other chunks' delays, and the dimension free) and ends n_K B_K later or when its real transfer
// returns, whichever is later; later stages are paced from these times, not from when threads
// woke — so one host can stand in for a network whose dimensions have the model's bandwidths and
// latencies (docs/schedule-executor.md).
#include <cstddef>
#include <string>
#include <vector>

#include "net/network.h"
#include "rt/schedule/grid.h"
#include "rt/types.h"
#include "sched/schedule.h"

namespace chorus::rt {

struct ExecutorOptions {
  DType dtype = DType::f32;
  ReduceOp op = ReduceOp::sum;
  // The network the schedule was made for (dims must match the grid), or nullptr. Gives each
  // stage's bytes per rank (coll::stage_cost), and with `emulate` its pace.
  const net::Network* network = nullptr;
  bool emulate = false;
  std::string tail_backend = "auto";  // flat all-reduce of an all-reduce's remainder
};

// One (chunk, stage), times in ns since the run's start. Emulated, start and end are the stage's
// times on the model's clock (its real operation may have started later, within the stage).
struct ExecutedStage {
  int chunk = 0;
  int stage = 0;
  int dim = 0;
  coll::Phase phase = coll::Phase::kReduceScatter;
  double arrive_ns = 0, start_ns = 0, end_ns = 0;
  double bytes_sent = 0;  // per rank
};

struct ExecutorDimStats {
  double bytes_per_rank = 0;  // sent on this dimension
  double busy_ns = 0;         // sum of its stages' start..end
  int stages = 0;
};

struct ExecutorRun {
  double time_ns = 0;  // this rank, from the start barrier to the end of its last stage
  std::vector<ExecutorDimStats> dims;
  std::vector<ExecutedStage> stages;
};

class ScheduleExecutor {
 public:
  // Validates the schedule against the grid (operation, stages per chunk, dim_order, no
  // deadlock); throws InputError naming the fault.
  ScheduleExecutor(RankGrid grid, sched::Schedule schedule, ExecutorOptions options = {});

  // Runs the collective over `count` elements of `buf` (in place). Collective over the world.
  ExecutorRun run(void* buf, std::size_t count);

  // Element ranges [begin, end) of `count` that hold this rank's result after a
  // reduce-scatter (all-reduce / all-gather: everything).
  std::vector<std::pair<std::size_t, std::size_t>> owned_ranges(std::size_t count) const;
  // This rank's piece of every chunk: its result of a reduce-scatter, its input to an all-gather.
  std::vector<std::pair<std::size_t, std::size_t>> piece_ranges(std::size_t count) const;
  // Elements the schedule carries (the rest of an all-reduce is the flat tail).
  std::size_t main_elements(std::size_t count) const;

  const RankGrid& grid() const { return grid_; }
  const sched::Schedule& schedule() const { return schedule_; }

 private:
  struct Range {
    std::size_t begin, len;
  };
  // The rank's range within a chunk of `e` elements after `level` cuts of chunk c's nesting.
  Range range(int c, std::size_t e, std::size_t level) const;
  std::size_t chunk_elements(std::size_t count) const;
  void validate();
  class Pass;  // one run (the .cpp)

  RankGrid grid_;
  sched::Schedule schedule_;
  ExecutorOptions options_;
  std::vector<std::vector<int>> nesting_;      // per chunk: dimensions in cut order
  std::vector<std::vector<int>> stage_of_op_;  // per dim: stage index of each dim_order entry
  std::vector<char> scratch_;
};

}  // namespace chorus::rt
