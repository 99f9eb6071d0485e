// The rendezvous store: a tiny TCP key-value server and its client.
// Wire format of a request: op (1 byte: 'S' set, 'G' get, 'A' add), key length (u32), key,
// value length (u32), value. A reply is a length (u32) and that many bytes; a get is answered
// only once its key exists, so waiting costs nothing on either side.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

#include "core/error.h"
#include "rt/errors.h"
#include "rt/rendezvous/tcp_store.h"

namespace chorus::rt {

namespace {

using Clock = std::chrono::steady_clock;

void put_u32(std::vector<char>& out, std::uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);
  out.insert(out.end(), b, b + 4);
}

std::uint32_t get_u32(const char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

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
void read_all(int fd, char* data, std::size_t len, Clock::time_point deadline,
              const std::string& what) {
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

}  // namespace

// ---- TCP client -----------------------------------------------------------------------------

TcpStore::TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout)
    : address_(fmt::format("{}:{}", host, port)) {
  const auto deadline = Clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  std::string last_error = "no address";
  for (;;) {
    addrinfo* res = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (rc != 0) {
      last_error = ::gai_strerror(rc);
    } else {
      for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
        const int fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
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
    if (fd_ >= 0) return;
    if (Clock::now() > deadline)
      throw CommError("store: cannot connect to " + address_ + ": " + last_error);
    ::usleep(20000);
  }
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<char> TcpStore::request(char op, const std::string& key,
                                    const std::vector<char>& value,
                                    std::chrono::milliseconds timeout) {
  std::lock_guard lock(mutex_);
  const std::string what = fmt::format("store {} '{}' at {}", op, key, address_);
  if (fd_ < 0) throw CommError(what + ": connection unusable after an earlier failure");
  std::vector<char> msg;
  msg.push_back(op);
  put_u32(msg, static_cast<std::uint32_t>(key.size()));
  msg.insert(msg.end(), key.begin(), key.end());
  put_u32(msg, static_cast<std::uint32_t>(value.size()));
  msg.insert(msg.end(), value.begin(), value.end());
  try {
    write_all(fd_, msg.data(), msg.size(), what);
    const auto deadline = Clock::now() + timeout;
    char len_bytes[4];
    read_all(fd_, len_bytes, 4, deadline, what);
    std::vector<char> reply(get_u32(len_bytes));
    read_all(fd_, reply.data(), reply.size(), deadline, what);
    return reply;
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
  std::vector<char> v(8);
  std::memcpy(v.data(), &delta, 8);
  const auto reply = request('A', key, v, std::chrono::seconds(60));
  std::int64_t x = 0;
  if (reply.size() == 8) std::memcpy(&x, reply.data(), 8);
  return x;
}

// ---- TCP server -----------------------------------------------------------------------------

struct TcpStoreServer::Impl {
  int listen_fd = -1;
  int wake_pipe[2] = {-1, -1};
  struct Client {
    int fd;
    std::vector<char> in;
  };
  std::vector<Client> clients;
  std::map<std::string, std::vector<char>> values;
  std::map<std::string, std::vector<int>> pending;  // key -> fds waiting in get

  static void reply(int fd, const std::vector<char>& value) {
    std::vector<char> out;
    put_u32(out, static_cast<std::uint32_t>(value.size()));
    out.insert(out.end(), value.begin(), value.end());
    try {
      write_all(fd, out.data(), out.size(), "store server");
    } catch (const std::exception&) {
      // The client went away; poll() will report it.
    }
  }

  // Handles every complete request in the client's input buffer.
  void handle(Client& c) {
    for (;;) {
      if (c.in.size() < 5) return;
      const std::uint32_t klen = get_u32(c.in.data() + 1);
      if (c.in.size() < 9 + klen) return;
      const std::uint32_t vlen = get_u32(c.in.data() + 5 + klen);
      const std::size_t total = 9 + static_cast<std::size_t>(klen) + vlen;
      if (c.in.size() < total) return;
      const char op = c.in[0];
      std::string key(c.in.data() + 5, klen);
      std::vector<char> value(c.in.begin() + 9 + klen, c.in.begin() + static_cast<long>(total));
      c.in.erase(c.in.begin(), c.in.begin() + static_cast<long>(total));
      if (op == 'S') {
        values[key] = value;
        reply(c.fd, {});
        auto it = pending.find(key);
        if (it != pending.end()) {
          for (int fd : it->second) reply(fd, value);
          pending.erase(it);
        }
      } else if (op == 'G') {
        auto it = values.find(key);
        if (it != values.end())
          reply(c.fd, it->second);
        else
          pending[key].push_back(c.fd);
      } else if (op == 'A') {
        std::int64_t x = 0, delta = 0;
        auto& v = values[key];
        if (v.size() == 8) std::memcpy(&x, v.data(), 8);
        if (value.size() == 8) std::memcpy(&delta, value.data(), 8);
        x += delta;
        v.resize(8);
        std::memcpy(v.data(), &x, 8);
        reply(c.fd, v);
        auto it = pending.find(key);
        if (it != pending.end()) {
          for (int fd : it->second) reply(fd, v);
          pending.erase(it);
        }
      }
    }
  }

  void drop(int fd) {
    for (auto& [key, fds] : pending) std::erase(fds, fd);
    ::close(fd);
  }
};

TcpStoreServer::TcpStoreServer(const std::string& bind_host, int port) : impl_(new Impl) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw CommError("store server: socket failed");
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, bind_host.c_str(), &addr.sin_addr) != 1) {
    ::close(fd);
    throw InputError("store server", "bind address must be an IPv4 address, got '" + bind_host + "'");
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 1024) != 0) {
    const std::string err = std::strerror(errno);
    ::close(fd);
    throw CommError(fmt::format("store server: cannot listen on {}:{}: {}", bind_host, port, err));
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  impl_->listen_fd = fd;
  if (::pipe(impl_->wake_pipe) != 0) throw CommError("store server: pipe failed");
  thread_ = std::thread([this] { serve(); });
}

TcpStoreServer::~TcpStoreServer() {
  if (thread_.joinable()) {
    const char b = 'x';
    [[maybe_unused]] const ssize_t n = ::write(impl_->wake_pipe[1], &b, 1);
    thread_.join();
  }
  for (auto& c : impl_->clients) ::close(c.fd);
  ::close(impl_->listen_fd);
  ::close(impl_->wake_pipe[0]);
  ::close(impl_->wake_pipe[1]);
}

void TcpStoreServer::serve() {
  Impl& s = *impl_;
  std::vector<pollfd> fds;
  for (;;) {
    fds.clear();
    fds.push_back({s.wake_pipe[0], POLLIN, 0});
    fds.push_back({s.listen_fd, POLLIN, 0});
    for (auto& c : s.clients) fds.push_back({c.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents != 0) return;
    if (fds[1].revents & POLLIN) {
      const int cfd = ::accept(s.listen_fd, nullptr, nullptr);
      if (cfd >= 0) {
        const int one = 1;
        ::setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        s.clients.push_back({cfd, {}});
      }
    }
    // Clients accepted just now are not in fds yet; only look at the polled ones.
    const std::size_t polled = fds.size() - 2;
    std::vector<int> closed;
    for (std::size_t i = 0; i < polled; ++i) {
      if (fds[i + 2].revents == 0) continue;
      auto& c = s.clients[i];
      char buf[65536];
      const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n <= 0) {
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        closed.push_back(c.fd);
        continue;
      }
      c.in.insert(c.in.end(), buf, buf + n);
      s.handle(c);
    }
    for (int fd : closed) {
      s.drop(fd);
      std::erase_if(s.clients, [fd](const Impl::Client& c) { return c.fd == fd; });
    }
  }
}

}  // namespace chorus::rt
