#pragma once
// Studies that run jobs of this very executable (`chorus launch -n N -- chorus run ...`) and read
// their JSON reports: `reproduce themis-real`, `reproduce syndicate-real`.
#include <string>

namespace chorus::eval {

// The path of the running executable; InputError naming `what` if /proc/self/exe is unreadable.
std::string self_exe(const std::string& what);

// Runs `cmd` through popen (every part of it is ours: no user text reaches the shell unquoted)
// and returns its standard output; InputError naming `what` and the command if it fails.
std::string run_capture(const std::string& cmd, const std::string& what);

}  // namespace chorus::eval
