#pragma once
// Dumps on request from outside: while a runtime lives, SIGUSR1 makes every runtime of the
// process write its flight record (chorus launch sends it to every rank before it stops a stalled
// or failed job; a user may `kill -USR1` a rank). The handler only wakes a thread of this
// module (writing a file is not async-signal-safe); the thread dumps. Installed by the first
// runtime, only when SIGUSR1's disposition is the default (which would end the process): a
// program that handles SIGUSR1 itself keeps its handler. Handler and thread then stay for the
// process's life, doing nothing while no runtime is registered: restoring the default at a
// runtime's end would let a launcher's SIGUSR1, sent just as the rank finalizes, kill it. This is
// process-wide by nature: the one registry of the runtime besides the default runtime
// (runtime_instance.h).
namespace chorus::rt {

class FlightRecorder;

// While registered, `recorder` dumps on SIGUSR1 (reason "signal"). The first registration of the
// process installs the handler and starts the thread.
void register_for_dump_signal(const FlightRecorder* recorder);
void unregister_for_dump_signal(const FlightRecorder* recorder);

}  // namespace chorus::rt
