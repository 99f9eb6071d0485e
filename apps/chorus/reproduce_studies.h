#pragma once
// `chorus reproduce`: every study in one table (reproduce_commands.cpp), its name, the one line
// `reproduce --help` gives it, and the function that declares its options on its subcommand and
// runs it. register_reproduce_commands makes the subcommands from this table alone, so help,
// did-you-mean on an unknown study and dispatch all read it.
#include <CLI/CLI.hpp>
#include <span>

namespace chorus::cli {

struct ReproduceStudy {
  const char* name;            // `chorus reproduce NAME`
  const char* description;     // its line in `chorus reproduce --help`
  void (*add)(CLI::App& cmd);  // declares the study's options on `cmd`, and the callback that runs it
};

std::span<const ReproduceStudy> reproduce_studies();

#ifdef CHORUS_HAVE_RT
// The studies on real ranks (reproduce_real_studies.cpp; src/eval/real).
void add_syndicate_real(CLI::App& cmd);  // chorus reproduce syndicate-real
void add_themis_real(CLI::App& cmd);     // chorus reproduce themis-real
// Torch programs captured and simulated on this host (src/capture/capture_validation.h).
void add_capture_validation(CLI::App& cmd);  // chorus reproduce capture-validation
#endif

}  // namespace chorus::cli
