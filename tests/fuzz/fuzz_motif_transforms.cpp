// `chorus motif expand` input: a comm-op line ("all_to_all 8 100 [root]") and one transform per
// line (S:<bytes>, P:<n>, P:ring, P:tree:<n>, P:tree1:<n>). Bad text must be an InputError; a
// plan the transforms build must pass the validity check, or the target aborts (a logic_error
// escapes), so the fuzzer also searches for compositions the algebra gets wrong.
#include <sstream>
#include <stdexcept>
#include <vector>

#include "coll/motif/compose.h"
#include "coll/motif/validate.h"
#include "fuzz_target.h"

static void expand(const std::string& text) {
  using namespace chorus::coll::motif;
  using chorus::CollectiveKind;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) throw chorus::InputError("op", "empty input");
  std::istringstream head(line);
  std::string op_name;
  long long ranks = 0, bytes = 0, root = 0;
  if (!(head >> op_name >> ranks >> bytes)) throw chorus::InputError("op", "expected: <op> <ranks> <bytes> [root]");
  head >> root;
  CollectiveKind kind{};
  if (!parse_kind(op_name, kind)) throw chorus::InputError("op", "unknown op");
  if (ranks < 1 || ranks > 12 || bytes < 1 || bytes > 256 || root < 0 || root >= ranks)
    throw chorus::InputError("op", "out of the fuzzed range");
  const CommOp op = make_comm_op(kind, static_cast<int>(ranks), static_cast<Bytes>(bytes), static_cast<int>(root));
  std::vector<Transform> ts;
  while (std::getline(in, line) && ts.size() < 6) ts.push_back(parse_transform(line, "transform"));
  MotifPlan plan = single_motif_plan(op);
  for (const auto& t : ts) {
    plan = apply(plan, t);
    if (plan.motifs.size() > 5000) throw chorus::InputError("transform", "too many motifs for the fuzzer");
  }
  const auto problems = check(plan, 1);
  if (!problems.empty()) throw std::logic_error("a composed plan is invalid: " + problems.front());
}
CHORUS_FUZZ_TARGET(expand)
