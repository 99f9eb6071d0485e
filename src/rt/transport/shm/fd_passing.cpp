#include "rt/transport/shm/fd_passing.h"

#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>

#include "rt/errors.h"

namespace chorus::rt {

namespace {

constexpr std::size_t kTokenChars = 32;  // 128 random bits, hex

std::string random_hex(std::size_t bytes) {
  std::string raw(bytes, '\0');
  std::size_t got = 0;
  while (got < bytes) {
    const ssize_t n = ::getrandom(raw.data() + got, bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw CommError(fmt::format("shm: getrandom: {}", std::strerror(errno)));
    got += static_cast<std::size_t>(n);
  }
  std::string hex;
  for (unsigned char c : raw) hex += fmt::format("{:02x}", c);
  return hex;
}

// Abstract address: sun_path starts with a NUL byte, the name follows (not NUL-terminated).
socklen_t abstract_address(const std::string& name, sockaddr_un& addr) {
  addr = sockaddr_un{};
  addr.sun_family = AF_UNIX;
  if (name.size() + 1 > sizeof(addr.sun_path)) throw CommError("shm: socket name too long");
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

int ms_until(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<long long>(left.count(), 0, 1 << 30));
}

// Waits for `events` on `fd`; false once the deadline has passed.
bool wait_for(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, ms_until(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) throw CommError(fmt::format("shm: poll: {}", std::strerror(errno)));
  }
}

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

FdServer::FdServer() {
  listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listener_ < 0) throw CommError(fmt::format("shm: socket: {}", std::strerror(errno)));
  name_ = "chorus-shm-" + random_hex(16);
  token_ = random_hex(kTokenChars / 2);
  sockaddr_un addr;
  const socklen_t len = abstract_address(name_, addr);
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(listener_, 256) != 0) {
    const std::string err = std::strerror(errno);
    ::close(listener_);
    throw CommError(fmt::format("shm: cannot listen on abstract socket @{}: {}", name_, err));
  }
  contact_ = name_ + " " + token_;
}

FdServer::~FdServer() {
  if (listener_ >= 0) ::close(listener_);
}

void FdServer::serve(int fd, int clients, std::chrono::steady_clock::time_point deadline) {
  const uid_t me = ::getuid();
  int served = 0;
  while (served < clients) {
    if (!wait_for(listener_, POLLIN, deadline))
      throw TimeoutError(
          fmt::format("shm: only {} of {} ranks came for the segment before the timeout", served, clients));
    const Fd conn(::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (conn.fd < 0) continue;  // EAGAIN, or a client that gave up
    ucred cred{};
    socklen_t cred_len = sizeof(cred);
    if (::getsockopt(conn.fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 || cred.uid != me) continue;
    // The token, then the descriptor. A client that is silent for a while is dropped: real
    // ranks send the token right after connecting.
    const auto token_deadline = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::seconds(10));
    std::string got;
    char buf[kTokenChars];
    while (got.size() < kTokenChars && wait_for(conn.fd, POLLIN, token_deadline)) {
      const ssize_t n = ::recv(conn.fd, buf, kTokenChars - got.size(), 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) break;
      got.append(buf, static_cast<std::size_t>(n));
    }
    if (got != token_) continue;
    char byte = 'F';
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    // One byte into an empty socket buffer never blocks.
    if (::sendmsg(conn.fd, &msg, MSG_NOSIGNAL) == 1) ++served;
  }
  ::close(listener_);
  listener_ = -1;
}

int receive_fd(const std::string& contact, std::chrono::steady_clock::time_point deadline) {
  const auto space = contact.find(' ');
  if (space == std::string::npos || contact.size() - space - 1 != kTokenChars)
    throw CommError(fmt::format("shm: malformed segment contact '{}' in the store", contact));
  const std::string name = contact.substr(0, space), token = contact.substr(space + 1);
  const Fd sock(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (sock.fd < 0) throw CommError(fmt::format("shm: socket: {}", std::strerror(errno)));
  sockaddr_un addr;
  const socklen_t len = abstract_address(name, addr);
  if (::connect(sock.fd, reinterpret_cast<sockaddr*>(&addr), len) != 0)
    throw CommError(
        fmt::format("shm: cannot reach rank 0 at abstract socket @{}: {} (ranks of one "
                    "job must share a network namespace)",
                    name, std::strerror(errno)));
  if (::send(sock.fd, token.data(), token.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(token.size()))
    throw CommError(fmt::format("shm: cannot send to rank 0: {}", std::strerror(errno)));
  if (!wait_for(sock.fd, POLLIN, deadline))
    throw TimeoutError("shm: rank 0 did not hand over the segment before the timeout");
  char byte = 0;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n = 0;
  do {
    n = ::recvmsg(sock.fd, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  const cmsghdr* c = n == 1 ? CMSG_FIRSTHDR(&msg) : nullptr;
  if (c == nullptr || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
      c->cmsg_len != CMSG_LEN(sizeof(int)) || (msg.msg_flags & MSG_CTRUNC) != 0)
    throw CommError("shm: rank 0 closed the connection without handing over the segment");
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return fd;
}

}  // namespace chorus::rt
