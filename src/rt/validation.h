#pragma once
// The checks every call passes before it is agreed on or queued: roots and peers that are
// ranks, buffers that exist where the operation reads or writes them (kOpTraits), and counts
// lists of one entry per rank. Each failure is an InputError naming the operation, backend
// and rank.
#include "rt/backend.h"
#include "rt/call.h"

namespace chorus::rt {

void validate(const Backend& backend, const Call& call);

}  // namespace chorus::rt
