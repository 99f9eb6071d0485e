// The rendezvous store's server (TcpStoreServer, tcp_store.h): a tiny TCP key-value server on one
// thread polling non-blocking sockets, so that a client that stops reading or sends garbage
// stalls nobody else; every connection must first present the job token (make_job_token). The
// frames are those of store_protocol.h; a get is parked until its key exists.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fmt/format.h>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "rt/errors.h"
#include "rt/rendezvous/store_protocol.h"
#include "rt/rendezvous/tcp_store.h"

namespace chorus::rt {

namespace proto = store_protocol;

namespace {

using Clock = std::chrono::steady_clock;

bool same_token(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;  // no early exit: the time taken says nothing about the token
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

std::string make_job_token() {
  unsigned char bits[16];
  std::size_t got = 0;
  while (got < sizeof bits) {
    const ssize_t n = ::getrandom(bits + got, sizeof bits - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw CommError(fmt::format("store: getrandom failed: {}", std::strerror(errno)));
    }
    got += static_cast<std::size_t>(n);
  }
  std::string hex;
  for (unsigned char b : bits) hex += fmt::format("{:02x}", b);
  return hex;
}

// ---- TCP server -----------------------------------------------------------------------------
//
// One thread polls the listening socket and every client, all non-blocking. Per client:
//   - input: at most one frame is buffered (kMaxHelloBytes before the hello, kMaxRequestBytes
//     after it); the decoder refuses a bad length before its body is read;
//   - one request at a time: the next frame is taken only once the previous reply has left and
//     no get is parked, so the output queue holds at most one reply (kMaxReplyBytes) and a client
//     that never reads its replies only stops itself;
//   - a bad frame, a wrong token, or no hello within kHelloTimeout: an error reply, then the
//     connection is shut down and closed (after kLinger at the latest).

namespace {

constexpr auto kHelloTimeout = std::chrono::seconds(10);
constexpr auto kLinger = std::chrono::seconds(2);
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr std::size_t kMaxUnauthenticated = 1024;  // beyond: the oldest such connection goes

}  // namespace

struct TcpStoreServer::Impl {
  int listen_fd = -1;
  int wake_pipe[2] = {-1, -1};
  std::string token;
  struct Client {
    int fd = -1;
    proto::Phase phase = proto::Phase::kAwaitingHello;
    std::vector<char> in;
    std::vector<char> out;
    std::size_t out_sent = 0;
    bool waiting = false;  // a get is parked in `pending`
    bool closing = false;  // an error reply is queued; close once it has left
    bool shut = false;     // shutdown(SHUT_WR) done
    bool dead = false;
    Clock::time_point deadline = Clock::time_point::max();  // hello or linger deadline
  };
  std::uint64_t next_id = 0;
  std::map<std::uint64_t, Client> clients;  // by id: ascending = oldest first
  std::map<std::string, std::vector<char>> values;
  std::map<std::string, std::vector<std::uint64_t>> pending;  // key -> clients parked in get
  Clock::time_point accept_paused_until{};

  static bool out_empty(const Client& c) { return c.out_sent == c.out.size(); }

  static std::size_t in_cap(const Client& c) {
    return static_cast<std::size_t>(c.phase == proto::Phase::kReady ? proto::kMaxRequestBytes : proto::kMaxHelloBytes);
  }

  static void flush(Client& c) {
    while (!c.dead && !out_empty(c)) {
      const ssize_t n = ::send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c.out_sent += static_cast<std::size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      } else {
        c.dead = true;
      }
    }
    if (c.dead) return;
    c.out.clear();
    c.out_sent = 0;
    if (c.closing && !c.shut) {
      ::shutdown(c.fd, SHUT_WR);  // the peer reads the error, then EOF
      c.shut = true;
    }
  }

  static void send_frame(Client& c, const std::vector<char>& frame) {
    c.out.insert(c.out.end(), frame.begin(), frame.end());
    flush(c);
  }

  void unpark(std::uint64_t id, Client& c) {
    if (!c.waiting) return;
    for (auto it = pending.begin(); it != pending.end();) {
      std::erase(it->second, id);
      it = it->second.empty() ? pending.erase(it) : std::next(it);
    }
    c.waiting = false;
  }

  void fail(std::uint64_t id, Client& c, const std::string& message) {
    if (c.closing || c.dead) return;
    unpark(id, c);
    c.in.clear();
    c.in.shrink_to_fit();
    c.closing = true;
    c.deadline = Clock::now() + kLinger;
    send_frame(c, proto::encode_error(message));
  }

  void wake(const std::string& key) {
    auto it = pending.find(key);
    if (it == pending.end()) return;
    const auto ids = std::move(it->second);
    pending.erase(it);
    const auto reply = proto::encode_reply({true, values[key]});
    for (std::uint64_t id : ids) {
      auto c = clients.find(id);
      if (c == clients.end() || !c->second.waiting) continue;
      c->second.waiting = false;
      send_frame(c->second, reply);
    }
  }

  void execute(std::uint64_t id, Client& c, proto::Request& r) {
    switch (r.op) {
      case proto::Op::kHello:
        if (!same_token(std::string_view(r.value.data(), r.value.size()), token)) {
          fail(id, c, "wrong job token: this store belongs to another job");
          return;
        }
        c.phase = proto::Phase::kReady;
        c.deadline = Clock::time_point::max();
        send_frame(c, proto::encode_reply({true, {}}));
        return;
      case proto::Op::kSet:
        values[r.key] = std::move(r.value);
        send_frame(c, proto::encode_reply({true, {}}));
        wake(r.key);
        return;
      case proto::Op::kGet: {
        auto it = values.find(r.key);
        if (it != values.end()) {
          send_frame(c, proto::encode_reply({true, it->second}));
        } else {
          c.waiting = true;
          pending[r.key].push_back(id);
        }
        return;
      }
      case proto::Op::kAdd: {
        auto& v = values[r.key];
        const std::int64_t x =
            static_cast<std::int64_t>(static_cast<std::uint64_t>(v.size() == 8 ? proto::decode_i64(v) : 0) +
                                      static_cast<std::uint64_t>(proto::decode_i64(r.value)));  // wraps, never UB
        v = proto::encode_i64(x);
        send_frame(c, proto::encode_reply({true, v}));
        wake(r.key);
        return;
      }
    }
  }

  // Takes the client's buffered frames while it may have one (see above); true if it took any.
  bool process(std::uint64_t id, Client& c) {
    bool progressed = false;
    while (!c.dead && !c.closing && !c.waiting && out_empty(c) && !c.in.empty()) {
      auto d = proto::decode_request(c.in, c.phase);
      if (d.status == proto::Status::kNeedMore) break;
      progressed = true;
      if (d.status == proto::Status::kError) {
        fail(id, c, d.error);
        break;
      }
      c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(d.consumed));
      execute(id, c, d.request);
    }
    return progressed;
  }

  void receive(Client& c) {
    if (c.closing) {  // discard whatever still comes until EOF
      char sink[4096];
      const ssize_t n = ::recv(c.fd, sink, sizeof sink, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) c.dead = true;
      return;
    }
    const std::size_t room = in_cap(c) - std::min(in_cap(c), c.in.size());
    if (room == 0) return;
    const std::size_t have = c.in.size();
    c.in.resize(have + std::min(room, kReadChunk));
    const ssize_t n = ::recv(c.fd, c.in.data() + have, c.in.size() - have, MSG_DONTWAIT);
    c.in.resize(have + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) c.dead = true;
  }

  void close_client(std::uint64_t id) {
    auto it = clients.find(id);
    if (it == clients.end()) return;
    unpark(id, it->second);
    ::close(it->second.fd);
    clients.erase(it);
  }

  // Closes the oldest connection that has not said hello yet; false if there is none.
  bool evict_unauthenticated() {
    for (auto& [id, c] : clients) {
      if (c.phase == proto::Phase::kAwaitingHello) {
        close_client(id);
        return true;
      }
    }
    return false;
  }

  void accept_new() {
    for (int i = 0; i < 64; ++i) {
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: make room at the expense of an unauthenticated connection,
          // or stop accepting for a moment (the listening socket would stay readable).
          if (!evict_unauthenticated()) accept_paused_until = Clock::now() + std::chrono::milliseconds(100);
        }
        return;  // EAGAIN, or an aborted connection
      }
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      std::size_t unauthenticated = 0;
      for (const auto& [id, c] : clients) unauthenticated += c.phase == proto::Phase::kAwaitingHello ? 1 : 0;
      if (unauthenticated >= kMaxUnauthenticated) evict_unauthenticated();
      Client c;
      c.fd = fd;
      c.deadline = Clock::now() + kHelloTimeout;
      clients.emplace(next_id++, std::move(c));
    }
  }
};

TcpStoreServer::TcpStoreServer(const std::string& bind_host, int port, std::string token) : impl_(new Impl) {
  token_ = token.empty() ? make_job_token() : std::move(token);
  impl_->token = token_;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
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
  if (::pipe2(impl_->wake_pipe, O_CLOEXEC) != 0) {
    ::close(fd);
    throw CommError("store server: pipe failed");
  }
  thread_ = std::thread([this] { serve(); });
}

TcpStoreServer::~TcpStoreServer() {
  if (thread_.joinable()) {
    const char b = 'x';
    [[maybe_unused]] const ssize_t n = ::write(impl_->wake_pipe[1], &b, 1);
    thread_.join();
  }
  for (auto& [id, c] : impl_->clients) ::close(c.fd);
  ::close(impl_->listen_fd);
  ::close(impl_->wake_pipe[0]);
  ::close(impl_->wake_pipe[1]);
}

void TcpStoreServer::serve() {
  Impl& s = *impl_;
  std::vector<pollfd> fds;
  std::vector<std::uint64_t> ids;
  for (;;) {
    const auto now = Clock::now();
    fds.clear();
    ids.clear();
    fds.push_back({s.wake_pipe[0], POLLIN, 0});
    const bool accepting = now >= s.accept_paused_until;
    fds.push_back({accepting ? s.listen_fd : -1, POLLIN, 0});
    auto next_deadline = accepting ? Clock::time_point::max() : s.accept_paused_until;
    for (auto& [id, c] : s.clients) {
      short events = 0;
      if (c.closing || c.in.size() < Impl::in_cap(c)) events |= POLLIN;
      if (!Impl::out_empty(c)) events |= POLLOUT;
      fds.push_back({c.fd, events, 0});
      ids.push_back(id);
      next_deadline = std::min(next_deadline, c.deadline);
    }
    int timeout_ms = -1;  // nobody has a deadline: sleep until something happens
    if (next_deadline != Clock::time_point::max())
      timeout_ms = static_cast<int>(std::clamp<std::int64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - now).count() + 1, 0, 1000));
    if (::poll(fds.data(), fds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[0].revents != 0) return;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const short re = fds[i + 2].revents;
      if (re == 0) continue;
      auto it = s.clients.find(ids[i]);
      if (it == s.clients.end()) continue;  // evicted meanwhile
      Impl::Client& c = it->second;
      if (re & POLLOUT) Impl::flush(c);
      if (re & (POLLIN | POLLHUP | POLLERR)) s.receive(c);
      if (re & (POLLERR | POLLNVAL)) c.dead = true;
      // Hung up while its buffer is full (not polled for input): nothing more will come.
      if ((re & POLLHUP) && !(fds[i + 2].events & POLLIN)) c.dead = true;
    }
    // Frames taken from one client may wake another (set, add): go round until nobody moves.
    for (bool progressed = true; progressed;) {
      progressed = false;
      for (auto& [id, c] : s.clients) progressed = s.process(id, c) || progressed;
    }
    const auto later = Clock::now();
    std::vector<std::uint64_t> gone;
    for (auto& [id, c] : s.clients) {
      if (c.dead || (c.closing && later >= c.deadline)) {
        gone.push_back(id);
      } else if (later >= c.deadline) {  // no hello in time
        s.fail(id, c, fmt::format("no hello with the job token within {} s", kHelloTimeout.count()));
        if (c.dead) gone.push_back(id);
      }
    }
    for (std::uint64_t id : gone) s.close_client(id);
    if (fds[1].revents & POLLIN) s.accept_new();
  }
}

}  // namespace chorus::rt
