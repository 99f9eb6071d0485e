// Point to point on the mpi backend: nonblocking sends and receives polled against the
// operation deadline (complete()); on timeout, time_out() cancels what can be cancelled and
// names the peer. The application's receive learns its message's size first (MPI_Improbe).
#include <sched.h>

#include <chrono>
#include <fmt/format.h>
#include <string>

#include "rt/backends/agreement.h"
#include "rt/backends/mpi/mpi_backend.h"
#include "rt/errors.h"

namespace chorus::rt::mpi_backend {

void MpiBackend::progress() {
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, MPI_STATUS_IGNORE);
}

void MpiBackend::user_send(const void* buf, std::size_t bytes, int dst) { send_on(buf, bytes, dst, kUserTag); }

void MpiBackend::user_recv(void* buf, std::size_t bytes, int src) {
  MPI_Message message = MPI_MESSAGE_NULL;
  MPI_Status status;
  int found = 0;
  check(MPI_Improbe(src, kUserTag, comm_, &found, &message, &status), "recv");
  if (!found) {
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (unsigned i = 1; !found; ++i) {
      if (i >= 64) sched_yield();  // ranks may outnumber cores
      if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) [[unlikely]]
        time_out(nullptr, 0, "recv", src);
      check(MPI_Improbe(src, kUserTag, comm_, &found, &message, &status), "recv");
    }
  }
  int count = 0;
  check(MPI_Get_count(&status, MPI_BYTE, &count), "recv");
  if (static_cast<std::size_t>(count) != bytes) [[unlikely]]
    throw_receive_size_mismatch("mpi", "recv", rank_, src, bytes, static_cast<std::uint64_t>(count));
  MPI_Request req;
  check(MPI_Imrecv(buf, count, MPI_BYTE, &message, &req), "recv");
  complete(&req, 1, "recv", src);
}

void MpiBackend::send(const void* buf, std::size_t bytes, int dst) { send_on(buf, bytes, dst, kTag); }

void MpiBackend::recv(void* buf, std::size_t bytes, int src) { recv_on(buf, bytes, src, kTag); }

void MpiBackend::send_recv(const void* sbuf, std::size_t sbytes, int dst, void* rbuf, std::size_t rbytes, int src) {
  MPI_Request reqs[2];
  check(MPI_Irecv(rbuf, to_int(rbytes, "send_recv"), MPI_BYTE, src, kTag, comm_, &reqs[0]), "send_recv");
  check(MPI_Isend(sbuf, to_int(sbytes, "send_recv"), MPI_BYTE, dst, kTag, comm_, &reqs[1]), "send_recv");
  complete(reqs, 2, "send_recv", src);
}

void MpiBackend::send_on(const void* buf, std::size_t bytes, int dst, int tag) {
  MPI_Request req;
  check(MPI_Isend(buf, to_int(bytes, "send"), MPI_BYTE, dst, tag, comm_, &req), "send");
  complete(&req, 1, "send", dst);
}

void MpiBackend::recv_on(void* buf, std::size_t bytes, int src, int tag) {
  MPI_Request req;
  check(MPI_Irecv(buf, to_int(bytes, "recv"), MPI_BYTE, src, tag, comm_, &req), "recv");
  complete(&req, 1, "recv", src);
}

void MpiBackend::complete(MPI_Request* reqs, int n, const char* what, int peer) {
  int done = 0;
  check(MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE), what);
  if (done) return;
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (unsigned i = 1;; ++i) {
    check(MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE), what);
    if (done) return;
    if (i >= 64) sched_yield();  // ranks may outnumber cores
    if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) [[unlikely]]
      time_out(reqs, n, what, peer);
  }
}

void MpiBackend::time_out(MPI_Request* reqs, int n, const char* what, int peer) {
  // Cancel what can be cancelled (an unmatched receive); see the file comment for the rest.
  int abandoned = 0;
  for (int i = 0; i < n; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&reqs[i]);
    int finished = 0;
    MPI_Test(&reqs[i], &finished, MPI_STATUS_IGNORE);
    if (!finished) ++abandoned;
  }
  throw TimeoutError(
      fmt::format("mpi {}: rank {} timed out waiting for rank {} after {} ms (the peer is stuck, died, or "
                  "the ranks disagree on the call){}",
                  what, rank_, peer, timeout_.count(),
                  abandoned > 0 ? fmt::format("; {} request(s) abandoned inside MPI: this process must make "
                                              "no further MPI calls",
                                              abandoned)
                                : std::string()));
}

}  // namespace chorus::rt::mpi_backend
