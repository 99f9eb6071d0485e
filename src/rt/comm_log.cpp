#include "rt/comm_log.h"

#include <cerrno>
#include <chrono>
#include <cstring>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "rt/rendezvous/bootstrap.h"

namespace chorus::rt {

CommLog::CommLog(const std::string& prefix, int rank, int world_size, const std::string& where,
                 const ClockOffset& clock)
    : path_(fmt::format("{}.{}.jsonl", prefix, rank)), rank_(rank) {
  file_ = std::fopen(path_.c_str(), "w");
  if (file_ == nullptr)
    throw InputError(where, fmt::format("cannot write the communication log '{}': {}", path_, std::strerror(errno)));
  const auto unix_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string offset = clock.error_ns < 0 ? std::string()
                                                : fmt::format(",\"clock_to_rank0_ns\":{},\"clock_error_ns\":{}",
                                                              clock.to_rank0_ns, clock.error_ns);
  fmt::print(file_, "{{\"chorus_comm_log\":1,\"rank\":{},\"world_size\":{},\"unix_time_ns\":{},\"host\":{}{}}}\n", rank,
             world_size, unix_ns, nlohmann::json(host_name()).dump(), offset);
}

CommLog::~CommLog() {
  if (file_ != nullptr) std::fclose(file_);
}

void CommLog::record(const std::string& backend, const CommRecord& r) {
  const std::size_t bytes = r.count * dtype_bytes(r.dtype);
  // Group names are the application's strings: quoted and escaped as JSON.
  std::lock_guard lock(mutex_);
  fmt::print(
      file_,
      "{{\"rank\":{},\"backend\":{},\"op\":\"{}\",\"count\":{},\"dtype\":\"{}\",\"bytes\":{},\"async\":{},\"ok\":{},"
      "\"issue_ns\":{},\"start_ns\":{},\"end_ns\":{}}}\n",
      rank_, nlohmann::json(backend).dump(), to_string(r.op), r.count, to_string(r.dtype), bytes, r.async_op, r.ok,
      r.issue_ns, r.start_ns, r.end_ns);
}

}  // namespace chorus::rt
