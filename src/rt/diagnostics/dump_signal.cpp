#include "rt/diagnostics/dump_signal.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <mutex>
#include <thread>
#include <vector>

#include "rt/diagnostics/flight_recorder.h"

namespace chorus::rt {

namespace {

struct DumpSignal {
  std::mutex lifecycle;  // registrations, one at a time
  std::mutex mutex;      // `recorders`, which the thread reads
  std::vector<const FlightRecorder*> recorders;
  int pipe_fds[2] = {-1, -1};
  bool started = false;  // the handler (if SIGUSR1 had its default) and the thread exist
};

// The process's one registry (dump_signal.h), never destroyed: a process may exit with a runtime
// alive (a Python program that never finalizes), its thread still serving.
DumpSignal& state() {
  static DumpSignal* s = new DumpSignal;
  return *s;
}

// Async-signal-safe: a byte into the pipe. The write end is set before the handler is
// installed and never closed.
std::atomic<int> g_wake_fd{-1};

void on_sigusr1(int) {
  const int saved = errno;
  const char b = 'd';
  [[maybe_unused]] const auto n = ::write(g_wake_fd.load(), &b, 1);
  errno = saved;
}

void serve(int read_fd) {
  for (;;) {
    char b = 0;
    const auto n = ::read(read_fd, &b, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    std::lock_guard lock(state().mutex);
    for (const FlightRecorder* r : state().recorders) r->dump("signal", "SIGUSR1");
  }
}

}  // namespace

void register_for_dump_signal(const FlightRecorder* recorder) {
  DumpSignal& s = state();
  std::lock_guard life(s.lifecycle);
  {
    std::lock_guard lock(s.mutex);
    s.recorders.push_back(recorder);
  }
  if (s.started) return;
  s.started = true;
  struct sigaction current {};
  if (::sigaction(SIGUSR1, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) return;
  if (::pipe2(s.pipe_fds, O_CLOEXEC) != 0) return;
  g_wake_fd = s.pipe_fds[1];
  std::thread(serve, s.pipe_fds[0]).detach();
  struct sigaction act {};
  act.sa_handler = on_sigusr1;
  sigemptyset(&act.sa_mask);
  act.sa_flags = SA_RESTART;
  ::sigaction(SIGUSR1, &act, nullptr);
}

void unregister_for_dump_signal(const FlightRecorder* recorder) {
  DumpSignal& s = state();
  std::lock_guard life(s.lifecycle);
  std::lock_guard lock(s.mutex);
  std::erase(s.recorders, recorder);
}

}  // namespace chorus::rt
