#pragma once
// Self-check of the runtime: inputs every rank can regenerate, local references, and the
// checks used by `chorus bench --check`, rt_check and rt_mixing. (Kept in the library so the
// bench can verify results.) Values are small integers, so every reduction is exact in every dtype and the
// result must match the reference bit for bit, whatever order a backend reduces in.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rt/runtime.h"

namespace chorus::rt::selfcheck {

bool is_reduction(CollectiveKind op);
// Operations with an in-place form in the API (docs/runtime.md, "In place"): all_reduce and
// reduce (in == out on every rank), all_gather and all_gatherv (in = this rank's block of out).
bool has_in_place(CollectiveKind op);

// Whether a Case runs its operation in place (only has_in_place operations can): `varied` does
// for one salt in three, so that long runs of checks cover both forms.
enum class Placement { kVaried, kOutOfPlace, kInPlace };

// Input element i of `rank` for a reduction with `op` (or, with movement = true, for a data
// movement operation: more distinct values, so misplaced blocks show up).
double input_value(int rank, std::size_t i, DType dtype, ReduceOp op, bool movement, std::uint64_t salt = 0);
// Reference of element i reduced over ranks 0..world-1.
double reduced_value(int world, std::size_t i, DType dtype, ReduceOp op, std::uint64_t salt = 0);

// One prepared operation: buffers filled, issue() starts it, verify() checks the result.
class Case {
 public:
  // `root`: of rooted operations, 0..world-1; -1 for the default (1 for broadcast and scatter
  // when there is a rank 1, the last rank for reduce and gather: not rank 0, to catch a backend
  // that assumes it).
  // The operation runs on `runtime` (which must outlive the Case), or the default runtime.
  Case(Runtime& runtime, std::string backend, CollectiveKind op, DType dtype, ReduceOp rop, std::size_t count,
       std::uint64_t salt, Placement placement = Placement::kVaried, int root = -1);
  Case(std::string backend, CollectiveKind op, DType dtype, ReduceOp rop, std::size_t count, std::uint64_t salt,
       Placement placement = Placement::kVaried, int root = -1);
  Work issue(bool async_op);
  // Returns an empty string when correct, else a description of the first wrong element.
  std::string verify() const;
  // How many elements of the result differ from the reference (gaps between results included),
  // as nccl-tests' #wrong counts them on one rank.
  std::size_t wrong_elements() const;
  std::string describe() const;
  // The result buffer verify() reads (all but all_to_all, whose results are one per peer):
  // tests change a byte of it to see verify() find it.
  std::vector<char>& result() { return out_; }

 private:
  Runtime* runtime_;
  std::string backend_;
  CollectiveKind op_;
  DType dtype_;
  ReduceOp rop_;
  std::size_t count_;
  std::uint64_t salt_;
  bool in_place_;
  int world_, rank_, root_;
  std::vector<char> in_, out_;
  std::vector<std::vector<char>> ins_, outs_;
  Counts in_counts_, out_counts_, in_displs_, out_displs_;
  std::vector<char> expected_;              // expected out_ (or concatenated outs_), every byte:
                                            // gaps between the results keep the sentinel
  mutable std::vector<Work> pending_;       // operations issued besides the returned one
  mutable std::vector<char> concatenated_;  // all_to_all's results in one buffer

  // The result to compare with expected_, once every pending operation has ended.
  const std::vector<char>& result_bytes() const;
};

class Checker {
 public:
  Checker() = default;  // on the default runtime of the moment (rt::init's)
  explicit Checker(Runtime& runtime) : runtime_(&runtime) {}
  void run(const std::string& backend, CollectiveKind op, DType dtype, ReduceOp rop, std::size_t count);
  // Counts a check done by the caller; `error` empty means it passed.
  void record(const std::string& what, const std::string& error);
  std::size_t checks() const { return checks_; }
  std::int64_t failures() const { return failures_; }

 private:
  Runtime* runtime_ = nullptr;
  std::size_t checks_ = 0;
  std::int64_t failures_ = 0;
};

}  // namespace chorus::rt::selfcheck
