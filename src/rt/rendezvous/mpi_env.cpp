#include "rt/rendezvous/mpi_env.h"

#include <mpi.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "rt/errors.h"
#include "rt/rendezvous/bootstrap.h"

namespace chorus::rt {

namespace {
bool g_we_initialized = false;
// Set by any runtime's finalize() after a failure: several run at once as thread ranks in the tests.
std::atomic<bool> g_unusable{false};

// MPI can be initialised only once per process, so a program may run several
// init/finalize cycles of the runtime: MPI is finalised when the process exits.
void finalize_at_exit() {
  if (mpi_finalizes_at_exit()) MPI_Finalize();
}
}  // namespace

bool mpi_finalizes_at_exit() { return g_we_initialized && !g_unusable && mpi_is_initialized(); }

bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_RANK") != nullptr;
}

bool mpi_is_initialized() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

void mpi_ensure_initialized() {
  // After a failure the runtime abandoned MPI requests (docs/failures.md): any MPI
  // call would progress them, and they may write buffers the program has freed since.
  if (g_unusable)
    throw CommError(
        "mpi: unusable in this process after an earlier communication failure (an "
        "abandoned operation may still be pending inside MPI); start a new job");
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = 0;
  if (initialized == 0) {
    // Lets the mpi backend fix each of Open MPI's all-reduce algorithms on a communicator of its
    // own (backends/mpi/tuned_algorithms.cpp); without a rules file or a forced algorithm, Open MPI's choices stay
    // its fixed ones. An explicit setting in the environment wins.
    setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0);
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    g_we_initialized = true;
    std::atexit(finalize_at_exit);
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_SERIALIZED)
    throw CommError("mpi: the MPI library provides thread level " + std::to_string(provided) +
                    "; the runtime needs at least MPI_THREAD_SERIALIZED");
}

void mpi_mark_unusable() { g_unusable = true; }

int mpi_world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int mpi_world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

std::string mpi_broadcast_string(const std::string& value, int root) {
  int len = static_cast<int>(value.size());
  MPI_Bcast(&len, 1, MPI_INT, root, MPI_COMM_WORLD);
  std::vector<char> buf(value.begin(), value.end());
  buf.resize(static_cast<std::size_t>(len));
  MPI_Bcast(buf.data(), len, MPI_CHAR, root, MPI_COMM_WORLD);
  return std::string(buf.begin(), buf.end());
}

void mpi_split_world_as_non_member() {
  MPI_Comm none = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, &none);
}

bool mpi_all_on_one_host() {
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int local_size = 0;
  MPI_Comm_size(local, &local_size);
  MPI_Comm_free(&local);
  int ok = local_size == mpi_world_size() ? 1 : 0, all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all_ok == 1;
}

std::string mpi_agree_tcp_endpoint() {
  mpi_ensure_initialized();
  const bool one_host = mpi_all_on_one_host();
  std::string endpoint;
  if (mpi_world_rank() == 0) {
    std::string host = "127.0.0.1";
    if (const char* h = std::getenv("CHORUS_GLOO_HOST")) {
      host = h;
    } else if (!one_host) {
      host = host_name();
    }
    int port = 0;
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
      const int one = 1;
      ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(one_host ? INADDR_LOOPBACK : INADDR_ANY);
      socklen_t len = sizeof a;
      if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
          ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
        port = ntohs(a.sin_port);
      ::close(fd);
    }
    endpoint = port > 0 ? host + ":" + std::to_string(port) : std::string("!no free TCP port on rank 0");
  }
  endpoint = mpi_broadcast_string(endpoint, 0);
  if (endpoint.starts_with('!')) throw CommError("mpirun rendezvous for torch.distributed: " + endpoint.substr(1));
  return endpoint;
}

}  // namespace chorus::rt
