#pragma once
// What a run may allocate, checked before it allocates: a flag or file that would need more
// memory than the machine can give is refused up front (exit 2 naming the flag and the estimate),
// not met by std::bad_alloc, the OOM killer or swap minutes later.
#include <cstdint>
#include <string>

namespace chorus {

// The smaller of the memory the kernel says is available (MemAvailable) and this process's
// address-space limit (RLIMIT_AS, `ulimit -v`), in bytes.
std::uint64_t memory_budget_bytes();

// Throws InputError(field, "... needs about X, more than the Y this machine can give ...") when
// `estimate_bytes` exceeds the budget. `what` says what the memory is for.
void require_memory(double estimate_bytes, const std::string& field, const std::string& what);

// Throws InputError(field, "must be in lo..hi, got v") unless lo <= value <= hi.
void require_range(long long value, long long lo, long long hi, const std::string& field);

// Iteration counts a run may ask for (a benchmark's iters and warmup, a training DAG's
// iterations): a million is hours of work at the slowest and keeps per-iteration records small.
inline constexpr long long kMaxIterations = 1'000'000;

// Measured repetitions of a whole job on the runtime (its `repeat`, the median reported): each
// is a full run of the job's plan.
inline constexpr long long kMaxRepeats = 1000;

}  // namespace chorus
