#pragma once
// Each command family registers its subcommands on the top-level CLI11 app.
// Callbacks throw chorus::InputError for bad input; main() turns that into exit status 2.
#include <CLI/CLI.hpp>
#include <string>

namespace chorus::cli {

void register_sim_commands(CLI::App& app);          // chorus sim ...
void register_sim_workload_command(CLI::App& sim);  // chorus sim workload
void register_sim_jobs_command(CLI::App& sim);      // chorus sim jobs
void register_sim_whatif_command(CLI::App& sim);    // chorus sim whatif (a capture's what-ifs)
void register_reproduce_commands(CLI::App& app);    // chorus reproduce ...
void register_rt_commands(CLI::App& app);           // chorus launch | bench | tune (runtime)
// `chorus launch [flags] PROGRAM ARGS` (or `chorus capture`) where ARGS hold a flag and no `--`
// comes before PROGRAM: CLI11 would read the flag as chorus launch's own. Returns the error that names the missing
// `--` and shows the command with it ("" when the command line is not of that form).
std::string launch_separator_error(CLI::App& app, int argc, const char* const* argv);
void register_run_commands(CLI::App& app);            // chorus run collective | schedule
void register_capture_command(CLI::App& app);         // chorus capture (a torch program recorded)
void register_topo_commands(CLI::App& app);           // chorus topo ... (TopoOpt)
void register_topo_optimize_command(CLI::App& topo);  // chorus topo optimize
void register_motif_commands(CLI::App& app);          // chorus motif ... (SYNDICATE motifs)
void register_plan_commands(CLI::App& app);           // chorus plan (SYNDICATE joint optimizer)
void register_export_command(CLI::App& app);          // chorus export --chakra
void register_sweep_command(CLI::App& app);           // chorus sweep SPEC.yaml (design-space sweeps)
void register_doctor_command(CLI::App& app);          // chorus doctor DIR (a hung job's flight records)

}  // namespace chorus::cli
