#pragma once
// Each command family registers its subcommands on the top-level CLI11 app.
// Callbacks throw chorus::InputError for bad input; main() turns that into exit status 2.
#include <CLI/CLI.hpp>

namespace chorus::cli {

void register_sim_commands(CLI::App& app);            // chorus sim ...
void register_sim_workload_command(CLI::App& sim);    // chorus sim workload
void register_sim_jobs_command(CLI::App& sim);        // chorus sim jobs
void register_reproduce_commands(CLI::App& app);      // chorus reproduce ...
void register_rt_commands(CLI::App& app);             // chorus launch | bench | tune (runtime)
void register_run_commands(CLI::App& app);            // chorus run collective | schedule
void register_topo_commands(CLI::App& app);           // chorus topo ... (TopoOpt)
void register_topo_optimize_command(CLI::App& topo);  // chorus topo optimize
void register_motif_commands(CLI::App& app);          // chorus motif ... (SYNDICATE motifs)
void register_plan_commands(CLI::App& app);           // chorus plan (SYNDICATE joint optimizer)
void register_export_command(CLI::App& app);          // chorus export --chakra

}  // namespace chorus::cli
