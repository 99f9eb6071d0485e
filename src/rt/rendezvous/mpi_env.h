#pragma once
// The process's MPI environment: whether mpirun started us, MPI initialisation with thread
// support (backend calls come from a progress thread), and the few collectives the
// bootstrap needs before any backend exists.
#include <string>

namespace chorus::rt {

bool launched_by_mpirun();      // Open MPI / PMIx / PMI environment variables present
void mpi_ensure_initialized();  // MPI_Init_thread(MPI_THREAD_MULTIPLE) once; checks the level
bool mpi_is_initialized();
// MPI is finalised at process exit (if we initialised it), not by rt::finalize(), so that
// init/finalize may be repeated. A backend stuck in MPI makes finalising impossible:
void mpi_mark_unusable();
bool mpi_finalizes_at_exit();  // MPI was initialised here and is neither finalised nor unusable
int mpi_world_rank();
int mpi_world_size();
std::string mpi_broadcast_string(const std::string& value, int root);
bool mpi_all_on_one_host();
// For a framework that meets over TCP (torch.distributed's MASTER_ADDR and MASTER_PORT) under
// mpirun: rank 0 finds a free TCP port on its host and every rank returns "host:port" (host:
// 127.0.0.1 when all ranks share a host, else CHORUS_GLOO_HOST or rank 0's host name).
// Initialises MPI; collective over MPI_COMM_WORLD.
std::string mpi_agree_tcp_endpoint();
// The part of a world rank that joins no group in an MPI_Comm_split of MPI_COMM_WORLD (the
// members' backends make the same call with their color).
void mpi_split_world_as_non_member();

}  // namespace chorus::rt
