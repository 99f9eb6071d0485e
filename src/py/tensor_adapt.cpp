#include "py/tensor_adapt.h"

#include <fmt/format.h>

namespace chorus::tensor_adapt {

namespace {

std::string describe(SplitError::Kind kind, std::size_t index, std::int64_t value) {
  switch (kind) {
    case SplitError::Kind::kLength:
      return fmt::format("{} split sizes, not one per rank", value);
    case SplitError::Kind::kNegative:
      return fmt::format("split size [{}] = {} is negative", index, value);
    case SplitError::Kind::kSum:
      return fmt::format("split sizes add up to {}, not to the tensor's rows", value);
    case SplitError::Kind::kTooLarge:
      return fmt::format("split size [{}] = {} is more than the tensor's rows", index, value);
  }
  return "bad split sizes";
}

}  // namespace

SplitError::SplitError(Kind k, std::size_t i, std::int64_t v)
    : std::invalid_argument(describe(k, i, v)), kind(k), index(i), value(v) {}

std::size_t row_units(std::size_t units, std::size_t rows) { return rows == 0 ? 0 : units / rows; }

rt::Counts displacements(const rt::Counts& counts) {
  rt::Counts displs(counts.size(), 0);
  for (std::size_t j = 1; j < counts.size(); ++j) displs[j] = displs[j - 1] + counts[j - 1];
  return displs;
}

std::optional<std::size_t> equal_block(std::size_t total, std::size_t world) {
  if (world == 0 || total % world != 0) return std::nullopt;
  return total / world;
}

Split equal_split(std::size_t block, std::size_t world) {
  Split s;
  s.counts.assign(world, block);
  s.displs = displacements(s.counts);
  return s;
}

Split split_rows(std::span<const std::int64_t> sizes, std::size_t world, std::size_t rows, std::size_t row_units) {
  if (sizes.size() != world) throw SplitError(SplitError::Kind::kLength, 0, static_cast<std::int64_t>(sizes.size()));
  Split s;
  s.counts.reserve(world);
  std::int64_t sum = 0;
  for (std::size_t j = 0; j < world; ++j)
    if (sizes[j] < 0) throw SplitError(SplitError::Kind::kNegative, j, sizes[j]);
  for (std::size_t j = 0; j < world; ++j) {
    if (static_cast<std::uint64_t>(sizes[j]) > rows) throw SplitError(SplitError::Kind::kTooLarge, j, sizes[j]);
    sum += sizes[j];
    s.counts.push_back(static_cast<std::size_t>(sizes[j]) * row_units);
  }
  if (sum != static_cast<std::int64_t>(rows)) throw SplitError(SplitError::Kind::kSum, 0, sum);
  s.displs = displacements(s.counts);
  return s;
}

}  // namespace chorus::tensor_adapt
