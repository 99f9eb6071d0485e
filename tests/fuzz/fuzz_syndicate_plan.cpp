// SYNDICATE plan files: any JSON read against the Fig. 6 problem (every comm-op's option, order,
// sizes and names checked), then the plan scheduled.
#include <nlohmann/json.hpp>

#include "fuzz_target.h"
#include "syndicate/fig6_example.h"
#include "syndicate/plan_json.h"

static void parse(const std::string& text) {
  static const chorus::syndicate::Problem problem = chorus::syndicate::make_problem(
      chorus::syndicate::fig6_workload(2), chorus::syndicate::builtin_topology("syndicate-fig6", 0, "fuzz"), {});
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return;
  const auto loaded = chorus::syndicate::plan_from_json(problem, j, "fuzz.json");
  chorus::syndicate::Scheduler scheduler(problem);
  (void)scheduler.run(loaded.plan, loaded.sched, true);
}
CHORUS_FUZZ_TARGET(parse)
