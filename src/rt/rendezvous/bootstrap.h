#pragma once
// Finding the world: who am I, how many are we, and where is the rendezvous store.
//   - under `chorus launch`: CHORUS_RANK, CHORUS_WORLD_SIZE, CHORUS_STORE_ADDR (host:port on
//     loopback, served by the launcher), CHORUS_STORE_TOKEN (the job token) and CHORUS_RUN_ID;
//   - under mpirun: ranks from MPI_COMM_WORLD; rank 0 serves the store and broadcasts its
//     address and job token over MPI (loopback when all ranks share a host, else rank 0's
//     host name);
//   - given by the caller (InitOptions::world: torch.distributed's rendezvous under torchrun):
//     its rank, size and store; the ranks' host names, exchanged through that store, tell
//     whether the world is on one host;
//   - otherwise: a world of one process with an in-memory store.
#include <chrono>
#include <memory>
#include <string>

#include "rt/rendezvous/tcp_store.h"
#include "rt/runtime.h"

namespace chorus::rt {

struct World {
  int rank = 0;
  int size = 1;
  std::string launcher;  // "chorus-launch", "mpirun", "external" or "none"
  bool single_host = true;
  std::string run_id;  // unique per run; names shared-memory segments
  std::string gloo_host = "127.0.0.1";
  std::unique_ptr<TcpStoreServer> server;  // rank 0 under mpirun
  std::shared_ptr<Store> store;
  std::string store_address;  // host:port of the TCP store; "" for the in-memory one
  std::string store_token;    // the job token of that store
};

// This host's name (gethostname), "unknown" when it has none: the host that logs, flight records
// and multi-host rendezvous name.
std::string host_name();

// Whether this process is one of several ranks started by chorus launch (or given by the
// caller's `external` world, such as torchrun's) rather than by mpirun: backend mpi cannot run.
bool several_ranks_without_mpirun(const ExternalWorld* external);

// `want_mpi`: initialise MPI even when not launched by mpirun (backend mpi requested).
// `external`: the caller's world (InitOptions::world), or null.
World bootstrap_world(bool want_mpi, std::chrono::milliseconds timeout, const ExternalWorld* external = nullptr);

}  // namespace chorus::rt
