#pragma once
// Switching every rank to a new plan between iterations by two-phase commit (SYNDICATE Sec. 5:
// the central optimizer commits the same plan to all enforcers over RPC with 2PC; the enforcers
// switch from the next iteration). Here the coordinator is rank 0 and the messages are runtime
// collectives on `backend`:
//   phase 1 (prepare): rank 0 broadcasts the proposal; every rank prepares it (parses and builds
//     its steps, without touching the running plan) and votes;
//   phase 2 (decide): the votes are gathered at rank 0, which broadcasts commit only if every vote
//     was yes; every rank then installs the prepared plan (commit) or drops it (abort), so the
//     old plan keeps running after an abort.
// A rank that fails or dies during the protocol makes the collectives fail (CommError) on the
// others: no rank installs a plan the others did not.
#include <functional>
#include <string>

namespace chorus::rt {

class Runtime;  // rt/runtime_instance.h

struct SwitchOutcome {
  bool committed = false;
  int no_votes = 0;  // ranks that voted no
};

// Collective over the ranks of `backend`. `proposal` matters on rank 0 only. `prepare` gets the
// proposal on every rank and returns its vote (an exception counts as no and is not rethrown);
// it must be local: a rank voting no takes no further part, so any collective set-up (process
// groups) belongs in `install`, which runs on every rank after a commit.
SwitchOutcome two_phase_commit(Runtime& runtime, const std::string& backend, const std::string& proposal,
                               const std::function<bool(const std::string&)>& prepare,
                               const std::function<void()>& install);
// The same on the process's default runtime (rt::init's).
SwitchOutcome two_phase_commit(const std::string& backend, const std::string& proposal,
                               const std::function<bool(const std::string&)>& prepare,
                               const std::function<void()>& install);

}  // namespace chorus::rt
