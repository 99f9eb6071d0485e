#pragma once
// What both Python front ends — chorus._rt (src/py) and the torch.distributed backend chorus._c10d
// (src/torch_backend) — make of torch's arguments before calling the runtime: torch's split sizes
// (rows of the first dimension per rank) as the runtime's per-rank counts and displacements.
// Neither Python nor torch here: the units are the caller's (elements for chorus._rt, bytes for
// the dtype-blind torch backend), and a wrong argument is a SplitError that each front end words
// as it always has (a ValueError either way). Unit-tested (tests/python/test_tensor_adapt.cpp).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include "rt/runtime.h"

namespace chorus::tensor_adapt {

// Per rank j: counts[j] units go to (or come from) it, starting at displs[j].
struct Split {
  rt::Counts counts;
  rt::Counts displs;
};

// Split sizes that do not fit their tensor.
class SplitError : public std::invalid_argument {
 public:
  enum class Kind {
    kLength,    // not one size per rank: `value` sizes
    kNegative,  // sizes[index] = value < 0 (the first such)
    kSum,       // the sizes add up to `value`, not to the tensor's rows
    kTooLarge,  // sizes[index] = value is more than the tensor's rows (their sum could overflow)
  };
  SplitError(Kind kind, std::size_t index, std::int64_t value);
  Kind kind;
  std::size_t index;
  std::int64_t value;
};

// The units in each row of a tensor of `units` units and `rows` rows (none when it has no rows).
std::size_t row_units(std::size_t units, std::size_t rows);

// Where each block starts when `counts` are laid one after another from 0.
rt::Counts displacements(const rt::Counts& counts);

// Equal blocks: `total` units over `world` ranks; nullopt when they do not divide evenly.
std::optional<std::size_t> equal_block(std::size_t total, std::size_t world);

// `world` blocks of `block` units, one after another.
Split equal_split(std::size_t block, std::size_t world);

// torch's split sizes: sizes[j] rows of `row_units` units each for rank j, out of a tensor of
// `rows` rows. Throws SplitError (length, then each negative size in order, then the sum).
Split split_rows(std::span<const std::int64_t> sizes, std::size_t world, std::size_t rows, std::size_t row_units);

}  // namespace chorus::tensor_adapt
