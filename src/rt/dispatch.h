#pragma once
// The one place an operation meets a backend: a Call becomes the backend's own method (or its
// named algorithm), the same shape for every operation.
#include <cstddef>

#include "rt/backend.h"
#include "rt/call.h"

namespace chorus::rt {

// Runs `call` on `backend`: with `algorithm` 0 the backend's own operation, else its named
// algorithm `algorithm - 1` (Backend::algorithms); `wire` is the reduce op the backend gets
// (avg as sum unless Backend::takes_avg). A uniform call of no data does nothing and a world of
// one copies locally; avg is divided afterwards.
void dispatch(Backend& backend, const Call& call, std::size_t algorithm, ReduceOp wire);

}  // namespace chorus::rt
