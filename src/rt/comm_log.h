#pragma once
// Communication logging (MCR-DL Sec. V-E): with InitOptions::log or CHORUS_RT_LOG=PREFIX, every
// operation of this rank becomes one JSON line of PREFIX.<rank>.jsonl: backend (or group), op,
// count, dtype, bytes, whether it was async, and three times on the host's monotonic clock (the
// same clock in every process of a host): issue (the call), start (it began running: later than
// issue when it queued behind other operations of its lane), end. The header names the host and
// the offset of this rank's clock to rank 0's with its error bound (clock_offset.h), so that logs
// of several hosts can be compared. `chorus profile` reads the files of all ranks
// (docs/runtime.md, "Communication log"). Off: one pointer test per call.
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "rt/clock_offset.h"
#include "rt/types.h"

namespace chorus::rt {

struct CommRecord {
  CollectiveKind op = CollectiveKind::kBarrier;
  std::size_t count = 0;
  DType dtype = DType::u8;
  bool async_op = false;
  bool ok = true;
  std::int64_t issue_ns = 0, start_ns = 0, end_ns = 0;
};

class CommLog {
 public:
  // Opens PREFIX.<rank>.jsonl (truncating it) and writes the header line; InputError naming
  // `where` if it cannot. `clock`: this rank's offset to rank 0's clock (error_ns -1: unknown).
  CommLog(const std::string& prefix, int rank, int world_size, const std::string& where, const ClockOffset& clock = {});
  ~CommLog();
  CommLog(const CommLog&) = delete;
  CommLog& operator=(const CommLog&) = delete;
  // Thread-safe; `backend` is the backend's or group's name.
  void record(const std::string& backend, const CommRecord& r);
  const std::string& path() const { return path_; }

 private:
  std::mutex mutex_;
  std::FILE* file_ = nullptr;
  std::string path_;
  int rank_ = 0;
};

}  // namespace chorus::rt
