// The rendezvous store's client (TcpStore, tcp_store.h): one connection to the server, one
// request at a time, each a frame of store_protocol.h answered by one reply frame; the server
// answers a get only once its key exists, so waiting costs nothing on either side.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <mutex>
#include <string>
#include <vector>

#include "rt/errors.h"
#include "rt/rendezvous/store_protocol.h"
#include "rt/rendezvous/tcp_store.h"

namespace chorus::rt {

namespace proto = store_protocol;

namespace {

using Clock = std::chrono::steady_clock;

// Writes everything or throws.
void write_all(int fd, const char* data, std::size_t len, const std::string& what) {
  while (len > 0) {
    const ssize_t n = ::send(fd, data, len, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw CommError(fmt::format("{}: send failed: {}", what, std::strerror(errno)));
    }
    data += n;
    len -= static_cast<std::size_t>(n);
  }
}

// Reads exactly len bytes before the deadline or throws.
void read_all(int fd, char* data, std::size_t len, Clock::time_point deadline, const std::string& what) {
  while (len > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) throw TimeoutError(what + ": timed out");
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 1000)));
    if (r < 0 && errno != EINTR) throw CommError(what + ": poll failed");
    if (r <= 0) continue;
    const ssize_t n = ::recv(fd, data, len, 0);
    if (n == 0) throw CommError(what + ": store connection closed (launcher or rank 0 gone)");
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw CommError(fmt::format("{}: recv failed: {}", what, std::strerror(errno)));
    }
    data += n;
    len -= static_cast<std::size_t>(n);
  }
}

// Sends one request frame and returns the payload of its reply; an error reply becomes a
// CommError carrying the server's message.
std::vector<char> exchange(int fd, const std::vector<char>& frame, Clock::time_point deadline,
                           const std::string& what) {
  write_all(fd, frame.data(), frame.size(), what);
  std::vector<char> buf;
  for (;;) {
    auto d = proto::decode_reply(buf);
    if (d.status == proto::Status::kFrame) {
      if (!d.reply.ok)
        throw CommError(fmt::format("{}: the store refused: {}", what,
                                    std::string(d.reply.payload.begin(), d.reply.payload.end())));
      return std::move(d.reply.payload);
    }
    if (d.status == proto::Status::kError) throw CommError(what + ": " + d.error);
    const std::size_t have = buf.size();
    buf.resize(static_cast<std::size_t>(d.needed));
    read_all(fd, buf.data() + have, buf.size() - have, deadline, what);
  }
}

}  // namespace

TcpStore::TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout, const std::string& token)
    : address_(fmt::format("{}:{}", host, port)) {
  const auto deadline = Clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::string last_error = "no address";
  while (fd_ < 0) {
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (rc != 0) {
      last_error = ::gai_strerror(rc);
    } else {
      for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
          const int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          fd_ = fd;
          break;
        }
        last_error = std::strerror(errno);
        ::close(fd);
      }
      ::freeaddrinfo(res);
    }
    if (fd_ >= 0) break;
    if (Clock::now() > deadline) throw CommError("store: cannot connect to " + address_ + ": " + last_error);
    ::usleep(20000);
  }
  // The hello gets at least a few seconds even when connecting used up the timeout.
  const auto hello_deadline = std::max(deadline, Clock::now() + std::chrono::seconds(5));
  try {
    exchange(fd_, proto::encode_hello(token), hello_deadline, "store hello to " + address_);
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<char> TcpStore::request(char op, const std::string& key, const std::vector<char>& value,
                                    std::chrono::milliseconds timeout) {
  std::lock_guard lock(mutex_);
  const std::string what = fmt::format("store {} '{}' at {}", op, proto::printable(key), address_);
  // Checked before anything is sent: a key or value over the limits is the caller's error.
  const auto frame = proto::encode_request({static_cast<proto::Op>(op), key, value});
  if (fd_ < 0) throw CommError(what + ": connection unusable after an earlier failure");
  try {
    return exchange(fd_, frame, Clock::now() + timeout, what);
  } catch (...) {
    ::close(fd_);  // the stream is out of step now
    fd_ = -1;
    throw;
  }
}

void TcpStore::set(const std::string& key, const std::vector<char>& value) {
  request('S', key, value, std::chrono::seconds(60));
}

std::vector<char> TcpStore::get(const std::string& key, std::chrono::milliseconds timeout) {
  return request('G', key, {}, timeout);
}

std::int64_t TcpStore::add(const std::string& key, std::int64_t delta) {
  const auto reply = request('A', key, proto::encode_i64(delta), std::chrono::seconds(60));
  if (reply.size() != 8)
    throw CommError(fmt::format("store add '{}' at {}: reply of {} bytes, expected 8", proto::printable(key), address_,
                                reply.size()));
  return proto::decode_i64(reply);
}

}  // namespace chorus::rt
