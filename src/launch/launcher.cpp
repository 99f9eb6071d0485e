#include "launch/launcher.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>

#include "launch/job_dumps.h"
#include "launch/job_plan.h"
#include "launch/spawn.h"
#include "launch/supervise.h"
#include "rt/errors.h"
#include "rt/rendezvous/tcp_store.h"

namespace chorus::launch {

namespace {

// The rendezvous store, started once the ranks wait at the gate (the launcher's first thread);
// null, with the reason in `error`, when it cannot start.
std::unique_ptr<rt::TcpStoreServer> serve_store(const std::string& token, std::string& error) {
  try {
    return std::make_unique<rt::TcpStoreServer>("127.0.0.1", 0, token);
  } catch (const std::exception& e) {
    error = e.what();
    return nullptr;
  }
}

}  // namespace

std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("-_./=:,+@%", c) != nullptr;
  });
  if (plain) return word;
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int usable_cpus() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
  return std::max(1, CPU_COUNT(&allowed));
}

JobResult run_job(const LaunchOptions& options) {
  // Plan: everything the children need is built before fork().
  validate_options(options);
  const CpuPlan cpus = plan_cpus(options);
  ensure_std_fds();
  const DescriptorLimit nofile(options);
  const std::string token = rt::make_job_token();  // before the forks; the store starts after them
  const std::string path = resolve_program(options.command[0]);
  JobDiagnostics diagnostics(options, job_run_id());
  const RankEnvironments envs(options, cpus, token, diagnostics.environment());
  JobOutput output;
  const InterruptGuard interrupts;
  // Spawn: the ranks wait at the gate.
  Job job = spawn_ranks({options, cpus, path, envs, nofile, interrupts, runs_other_python(path)}, output);
  diagnostics.spawned(job.pids);
  // Rendezvous: only now does the launcher start a thread (the store's), then opens the gate.
  std::string store_error;
  std::unique_ptr<rt::TcpStoreServer> server = job.fork_failed ? nullptr : serve_store(token, store_error);
  open_gate(job, server ? server->port() : 0, job.pids.size());
  // Supervise, then forward what is left and reap the store.
  JobResult result;
  result.status = supervise(options, job, output, path, server != nullptr, &diagnostics);
  result.interrupted = InterruptGuard::caught();
  finish_output(options, output, path);
  diagnostics.report();
  server.reset();
  if (!store_error.empty()) throw rt::CommError("launch: cannot start the rendezvous store: " + store_error);
  result.output = std::move(output.captured);
  return result;
}

int launch(const LaunchOptions& options) { return run_job(options).status; }

}  // namespace chorus::launch
