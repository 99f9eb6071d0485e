// chorus doctor DIR: a hung or failed job diagnosed from its ranks' flight records
// (src/diagnose; docs/runtime.md, "When a job hangs or crawls").
#include <fmt/format.h>

#include "apps/chorus/commands.h"
#include "diagnose/diagnosis.h"
#include "diagnose/dump_set.h"
#include "diagnose/stragglers.h"

namespace chorus::cli {

namespace {

struct DoctorArgs {
  std::string dir;
  bool json = false;
  bool stragglers = false;
};

void run_doctor(const DoctorArgs& a) {
  const diagnose::DumpSet set = diagnose::read_dump_dir(a.dir);
  const diagnose::Diagnosis d = diagnose::diagnose(set);
  if (a.json) {
    nlohmann::json j = diagnose::to_json(d);
    if (a.stragglers) j["stragglers"] = diagnose::to_json(diagnose::find_stragglers(set));
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("{}", diagnose::to_text(d));
  if (a.stragglers) fmt::print("{}", diagnose::to_text(diagnose::find_stragglers(set)));
}

}  // namespace

void register_doctor_command(CLI::App& app) {
  auto args = std::make_shared<DoctorArgs>();
  auto* doctor =
      app.add_subcommand("doctor", "Say why a job hung or failed, from its ranks' flight records (the dump directory)");
  doctor->add_option("dir", args->dir, "directory of rank-<R>.json flight records (and launcher.json)")->required();
  doctor->add_flag("--json", args->json, "print the diagnosis as JSON");
  doctor->add_flag("--stragglers", args->stragglers,
                   "also say which rank arrives last at the collectives, how often, and what it costs the others");
  doctor->footer(
      "The ranks write their flight records on an operation timeout, a communication error, SIGUSR1 or\n"
      "chorus.dump(), into CHORUS_RT_DUMP; chorus launch asks for them when a rank fails or the job stalls\n"
      "(--stall-timeout) and runs the doctor itself. Exit status 0 with a diagnosis (also 'no problem found'),\n"
      "2 when the directory holds no flight record or one that cannot be read (the file and field named).");
  doctor->callback([args] { run_doctor(*args); });
}

}  // namespace chorus::cli
