// The ranks' clock offsets to rank 0's, estimated through the store (clock_offset.h).
#include "rt/clock_offset.h"

#include <fmt/format.h>

#include <limits>

#include "rt/work.h"  // steady_now_ns

namespace chorus::rt {

namespace {

std::string encode(std::int64_t v) { return std::to_string(v); }

}  // namespace

ClockOffset estimate_clock_offset(Store& store, const std::string& prefix, int rank, int size,
                                  std::chrono::milliseconds timeout) {
  if (size <= 1) return {};
  try {
    if (rank == 0) {
      for (int r = 1; r < size; ++r)
        for (int k = 0; k < kClockRounds; ++k) {
          store.get(fmt::format("{}/ping/{}/{}", prefix, r, k), timeout);
          store.set_string(fmt::format("{}/pong/{}/{}", prefix, r, k), encode(steady_now_ns()));
        }
      return {};
    }
    ClockOffset best{0, std::numeric_limits<std::int64_t>::max()};
    for (int k = 0; k < kClockRounds; ++k) {
      const std::int64_t sent = steady_now_ns();
      store.set_string(fmt::format("{}/ping/{}/{}", prefix, rank, k), "");
      const std::int64_t theirs = std::stoll(store.get_string(fmt::format("{}/pong/{}/{}", prefix, rank, k), timeout));
      const std::int64_t received = steady_now_ns();
      // Rank 0 read its clock between `sent` and `received` (of this rank's clock): at their
      // middle, off by at most half the round trip.
      const std::int64_t half = (received - sent + 1) / 2;
      if (half < best.error_ns) best = {theirs - (sent + (received - sent) / 2), half};
    }
    return best;
  } catch (const std::exception&) {
    return {0, -1};
  }
}

}  // namespace chorus::rt
