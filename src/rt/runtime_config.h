#pragma once
// Process-wide settings of the runtime, read by the backends and work handles.
#include <cstdint>

namespace chorus::rt {

// Operation timeout in milliseconds (InitOptions::timeout_s or CHORUS_RT_TIMEOUT_S; default 300 s).
std::int64_t operation_timeout_ms();
void set_operation_timeout_ms(std::int64_t timeout_ms);

}  // namespace chorus::rt
