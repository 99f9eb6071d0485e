#pragma once
// The runtime's settings: InitOptions, else the environment (the one place the runtime reads
// CHORUS_RT_*). Each Runtime keeps its own (its operation timeout among them: Runtime::timeout_ms).
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace chorus::rt {

struct InitOptions;  // rt/runtime.h

// InitOptions with what they leave unset taken from the environment.
struct Settings {
  std::int64_t timeout_ms = 300000;  // InitOptions::timeout_s, CHORUS_RT_TIMEOUT_S
  bool check = false;                // InitOptions::check, CHORUS_RT_CHECK
  bool agree = true;                 // InitOptions::agree, CHORUS_RT_AGREE
  std::string tuning_table;          // InitOptions::tuning_table, CHORUS_RT_TUNING ("" none)
  std::string log;                   // InitOptions::log, CHORUS_RT_LOG ("" none)
  std::string log_setting;           // where `log` came from, for its errors
  // The flight recorder (diagnostics/flight_recorder.h): entries per lane (InitOptions::record_entries,
  // CHORUS_RT_RECORD; 0 off), where dumps go (CHORUS_RT_DUMP, "" for the default under the temporary directory)
  // and where the rank's beacon is mapped (CHORUS_RT_BEACON, set by chorus launch; "" none).
  std::size_t record_entries = 256;
  std::string dump_dir, beacon_dir;
};
// Throws InputError naming the option or variable for a bad value.
Settings resolve_settings(const InitOptions& options);

// When a waiting rank says once that it waits (finalize, shm, mpi's watchdog): after a twentieth
// of the operation timeout, between 1 and 10 s.
inline std::chrono::milliseconds wait_report_after(std::chrono::milliseconds timeout) {
  return std::clamp(timeout / 20, std::chrono::milliseconds(1000), std::chrono::milliseconds(10000));
}

// The largest timeout accepted: 10^7 s (~116 days). Deadlines are computed in nanoseconds on
// std::chrono::steady_clock (64-bit), which this keeps far from overflow.
inline constexpr std::int64_t kMaxTimeoutMs = 10'000'000'000LL;

// A timeout in seconds, as given by `setting` (named in the error), in milliseconds. Throws
// InputError for NaN, infinities, zero, negatives, values below 1 ms and values above
// kMaxTimeoutMs.
std::int64_t timeout_ms_from_seconds(double seconds, const std::string& setting);
// The same for a text (an environment variable): the whole text must be a decimal number.
std::int64_t timeout_ms_from_text(const char* text, const std::string& setting);

// A switch from the environment (CHORUS_RT_CHECK): unset or "" is `fallback`; "1", "on", "true",
// "yes" are on, "0", "off", "false", "no" off (any case); anything else is an InputError naming
// the variable, never silently off.
bool env_switch(const char* name, bool fallback);

// A byte count from the environment (CHORUS_SHM_SLOT_BYTES): unset or "" is `fallback`; else the
// whole text must be a decimal number in [lo, hi] ("-1", "1e999", "0x10" and "4 KiB" are
// InputErrors naming the variable and the range, never read as something else).
// `unit` names what is counted in the error ("bytes", "entries").
std::size_t env_bytes(const char* name, std::size_t fallback, std::size_t lo, std::size_t hi,
                      const char* unit = "bytes");

}  // namespace chorus::rt
