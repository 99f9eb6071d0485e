// chorus: plans, simulates and runs the collective communication of distributed training.
#include <cstdio>
#include <exception>
#include <fmt/format.h>
#include <string>

#include "apps/chorus/commands.h"
#include "apps/chorus/parse_errors.h"
#include "core/error.h"
#include "rt/errors.h"

namespace {

int run(int argc, char** argv) {
  CLI::App app{"chorus: plan, simulate and run collective communication for distributed training", "chorus"};
  app.set_help_all_flag("--help-all", "Print help for every command");
  app.set_version_flag("--version", "chorus " CHORUS_VERSION, "Print the version and exit");
  app.require_subcommand(1);
  chorus::cli::register_sim_commands(app);
  chorus::cli::register_reproduce_commands(app);
  chorus::cli::register_topo_commands(app);
  chorus::cli::register_motif_commands(app);
  chorus::cli::register_plan_commands(app);
  chorus::cli::register_export_command(app);
  chorus::cli::register_sweep_command(app);
  chorus::cli::register_doctor_command(app);
#ifdef CHORUS_HAVE_RT
  chorus::cli::register_rt_commands(app);
  chorus::cli::register_run_commands(app);
  chorus::cli::register_capture_command(app);
#endif
#ifdef CHORUS_HAVE_RT
  if (const std::string e = chorus::cli::launch_separator_error(app, argc, argv); !e.empty()) {
    std::fputs(e.c_str(), stderr);
    return chorus::kExitBadInput;
  }
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return chorus::cli::report_parse_error(app, e);
  } catch (const chorus::InputError& e) {
    return chorus::cli::report_input_error(app, e);  // a library's field named by its flag
  } catch (const chorus::rt::CommError& e) {
    // A peer died, a connection broke, an operation timed out: the job's fault, not chorus's.
    std::fflush(stdout);
    fmt::print(stderr, "chorus: communication error: {}\n", e.what());
    return chorus::kExitBadInput;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "chorus: internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

// Every command's exit status passes the check of standard output: a table written to a full
// disk is an error (exit 2), not a success.
int main(int argc, char** argv) { return chorus::cli::finish_standard_output(run(argc, argv)); }
