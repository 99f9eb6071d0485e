// Two-phase commit of a plan across the ranks (plan_switch.h).
#include "rt/enforcer/plan_switch.h"

#include <cstdint>
#include <vector>

#include "rt/runtime_instance.h"

namespace chorus::rt {

SwitchOutcome two_phase_commit(const std::string& backend, const std::string& proposal,
                               const std::function<bool(const std::string&)>& prepare,
                               const std::function<void()>& install) {
  return two_phase_commit(default_runtime("two_phase_commit"), backend, proposal, prepare, install);
}

SwitchOutcome two_phase_commit(Runtime& runtime, const std::string& backend, const std::string& proposal,
                               const std::function<bool(const std::string&)>& prepare,
                               const std::function<void()>& install) {
  const int me = runtime.rank(backend), n = runtime.size(backend);
  auto run = [&](Call call) { runtime.issue(backend, std::move(call), /*async_op=*/false); };
  // Phase 1: the proposal's length, then its bytes, from the coordinator.
  std::int64_t length = me == 0 ? static_cast<std::int64_t>(proposal.size()) : 0;
  run(calls::broadcast(&length, 1, DType::i64, 0));
  std::string text(static_cast<std::size_t>(length), '\0');
  if (me == 0) text = proposal;
  if (length > 0) run(calls::broadcast(text.data(), static_cast<std::size_t>(length), DType::u8, 0));
  std::int32_t vote = 0;
  try {
    vote = prepare(text) ? 1 : 0;
  } catch (...) {
    vote = 0;
  }
  // Phase 2: votes to the coordinator, its decision to everyone.
  std::vector<std::int32_t> votes(static_cast<std::size_t>(n), 0);
  run(calls::gather(&vote, me == 0 ? votes.data() : nullptr, 1, DType::i32, 0));
  std::int32_t decision[2] = {0, 0};  // commit, no votes
  if (me == 0) {
    for (auto v : votes) decision[1] += v ? 0 : 1;
    decision[0] = decision[1] == 0 ? 1 : 0;
  }
  run(calls::broadcast(decision, 2, DType::i32, 0));
  SwitchOutcome out{decision[0] == 1, decision[1]};
  if (out.committed) install();
  return out;
}

}  // namespace chorus::rt
