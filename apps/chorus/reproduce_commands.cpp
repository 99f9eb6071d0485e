// chorus reproduce themis
#include "apps/chorus/commands.h"

namespace chorus::cli {
void register_reproduce_commands(CLI::App& app) {
  auto* rep = app.add_subcommand("reproduce", "Reproduce a paper's evaluation");
  rep->require_subcommand(1);
}
}  // namespace chorus::cli
