// Cross-memory attach between the ranks of one host (process_vm_readv / writev, as Open MPI's
// and MPICH's shared-memory transports use it): whether it is allowed (same user, ptrace rules,
// a container's seccomp profile) is probed at set-up by reading a value every process holds at a
// different address (ASLR).
#include <sys/uio.h>

#include <cerrno>
#include <cstdlib>
#include <fmt/format.h>
#include <string_view>

#include "core/error.h"
#include "rt/transport/shm/shm_transport.h"

namespace chorus::rt::shm {

namespace {
const std::uint64_t kCmaProbe = kMagic ^ 0x636d61ULL;
}  // namespace

std::uint64_t probe_address() { return reinterpret_cast<std::uint64_t>(&kCmaProbe); }
std::uint64_t probe_value() { return kCmaProbe; }

bool copy_process_memory(int pid, void* local, std::uint64_t remote, std::size_t bytes, bool write) {
  std::size_t done = 0;
  while (done < bytes) {
    iovec here{static_cast<char*>(local) + done, bytes - done};
    iovec there{reinterpret_cast<void*>(remote + done), bytes - done};
    const ssize_t n =
        write ? ::process_vm_writev(pid, &here, 1, &there, 1, 0) : ::process_vm_readv(pid, &here, 1, &there, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EFAULT;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

bool env_cma_wanted() {
  const char* v = std::getenv("CHORUS_SHM_CMA");
  if (v == nullptr || *v == '\0' || std::string_view(v) == "1") return true;
  if (std::string_view(v) == "0") return false;
  throw InputError("environment CHORUS_SHM_CMA", fmt::format("'{}' is neither 0 nor 1", v));
}

}  // namespace chorus::rt::shm
