#include "rt/comm_log.h"

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace chorus::rt {

CommLog::CommLog(const std::string& prefix, int rank, int world_size, const std::string& where)
    : path_(fmt::format("{}.{}.jsonl", prefix, rank)), rank_(rank) {
  file_ = std::fopen(path_.c_str(), "w");
  if (file_ == nullptr)
    throw InputError(where, fmt::format("cannot write the communication log '{}': {}", path_, std::strerror(errno)));
  const auto unix_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  fmt::print(file_, "{{\"chorus_comm_log\":1,\"rank\":{},\"world_size\":{},\"unix_time_ns\":{}}}\n", rank, world_size,
             unix_ns);
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
