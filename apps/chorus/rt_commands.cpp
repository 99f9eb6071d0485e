// chorus launch | bench | tune — front ends of the communication runtime (chorus::rt).
#include "apps/chorus/commands.h"

namespace chorus::cli {

void register_rt_commands(CLI::App& app) { (void)app; }

}  // namespace chorus::cli
