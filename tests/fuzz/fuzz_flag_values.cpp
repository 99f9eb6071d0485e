// The values of the command line's flags (issue 31: "fuzzers extended to the flag parsers"):
// the first byte picks a parser, the rest is the flag's text. Sizes, operation names (the
// runtime's, the simulator's, the motifs'), dtypes, reduce ops, schedulers, digit grouping.
#include <string>

#include "coll/collective.h"
#include "coll/motif/motif.h"
#include "core/units.h"
#include "fuzz_target.h"
#include "rt/types.h"
#include "sched/scheduler.h"

static void parse(const std::string& input) {
  if (input.empty()) return;
  const std::string text = input.substr(1);
  switch (static_cast<unsigned char>(input[0]) % 7) {
    case 0:
      (void)chorus::group_digits(static_cast<double>(chorus::parse_bytes(text, "--sizes")));
      break;
    case 1:
      (void)chorus::rt::parse_op_kind(text, "--ops");
      break;
    case 2:
      (void)chorus::rt::parse_dtype(text, "--dtype");
      break;
    case 3:
      (void)chorus::rt::parse_reduce_op(text, "--reduce");
      break;
    case 4:
      (void)chorus::sched::parse_scheduler(text, "--scheduler");
      break;
    case 5: {
      chorus::CollectiveKind op{};
      (void)chorus::coll::parse_collective_op(text, op);
      break;
    }
    default: {
      chorus::CollectiveKind kind{};
      (void)chorus::coll::motif::parse_kind(text, kind);
    }
  }
}
CHORUS_FUZZ_TARGET(parse)
