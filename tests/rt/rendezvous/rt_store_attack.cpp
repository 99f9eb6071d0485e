// rt_store_attack: hostile clients against the live rendezvous store of `chorus launch` (or,
// under mpirun, the store rank 0 serves: the multi-host test runs it from another "host"), then
// a normal job through the same store. Every rank
//   1. opens connections that stay open through the job: a client that pipelines gets of an
//      8 MiB value and never reads the replies, one that never says hello, one stuck halfway
//      through a 1 MiB set;
//   2. runs --connections hostile connections from 6 threads (seed --seed + rank): random
//      bytes, truncated frames, lengths near 2^32, unknown ops, no token, a wrong token, a
//      second hello, and the 5-byte frame 'G' + key length 0xFFFFFFFA (before and after a
//      valid hello). Where the protocol says so, the store must answer with an error naming the
//      fault and close the connection;
//   3. does a normal job: set/get/add/barrier through TcpStore, a client with a wrong token
//      (CommError with the server's message), then rt::init(--backends, default gloo,shm) and a
//      checked all_reduce on each.
// Exit 0 only if all of that held; any failure is printed with the case that caused it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/split.h"
#include "rt/errors.h"
#include "rt/rendezvous/bootstrap.h"
#include "rt/rendezvous/mpi_env.h"
#include "rt/rendezvous/store.h"
#include "rt/rendezvous/store_protocol.h"
#include "rt/rendezvous/tcp_store.h"
#include "rt/runtime.h"

namespace rt_store_attack_program {  // one of the programs of rt_programs.cpp

namespace rt = chorus::rt;
namespace proto = chorus::rt::store_protocol;
using Clock = std::chrono::steady_clock;

namespace {

std::string g_host;
int g_port = 0;
std::string g_token;
std::mutex g_fail_mutex;
std::vector<std::string> g_failures;

void failure(const std::string& what) {
  std::lock_guard lock(g_fail_mutex);
  g_failures.push_back(what);
}

int connect_raw() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(g_port));
  ::inet_pton(AF_INET, g_host.c_str(), &a.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends as much as the socket takes within `wait_ms` (a store that stopped reading is fine).
void send_some(int fd, const std::vector<char>& bytes, int wait_ms = 2000) {
  std::size_t sent = 0;
  const auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  while (sent < bytes.size() && Clock::now() < deadline) {
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) {
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      return;  // the store closed: allowed for hostile input
    }
    sent += static_cast<std::size_t>(n);
  }
}

struct Outcome {
  std::vector<proto::Reply> replies;
  bool closed = false;  // EOF or reset seen
};

// Reads replies until the store closes the connection, up to `wait_ms` in all.
Outcome read_replies_until_close(int fd, int wait_ms) {
  Outcome o;
  std::vector<char> buf;
  const auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  while (Clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char tmp[4096];
    const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) {
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      o.closed = true;
      break;
    }
    buf.insert(buf.end(), tmp, tmp + n);
    for (;;) {
      const auto d = proto::decode_reply(buf);
      if (d.status == proto::Status::kNeedMore) break;
      if (d.status == proto::Status::kError) {
        failure("the store sent a malformed reply: " + d.error);
        return o;
      }
      o.replies.push_back(d.reply);
      buf.erase(buf.begin(), buf.begin() + static_cast<long>(d.consumed));
    }
  }
  return o;
}

// Sends a valid hello and reads its OK.
bool hello(int fd) {
  send_some(fd, proto::encode_hello(g_token));
  std::vector<char> buf;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    const auto d = proto::decode_reply(buf);
    if (d.status == proto::Status::kFrame) return d.reply.ok;
    if (d.status == proto::Status::kError) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char tmp[64];
    const ssize_t n = ::recv(fd, tmp, std::min<std::size_t>(sizeof tmp, d.needed - buf.size()), 0);
    if (n <= 0) return false;
    buf.insert(buf.end(), tmp, tmp + n);
  }
  return false;
}

std::vector<char> raw_head(char op, std::uint32_t klen) {
  std::vector<char> b{op};
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<char>((klen >> (8 * i)) & 0xff));
  return b;
}

std::vector<char> random_bytes(std::mt19937_64& rng, std::size_t n) {
  std::vector<char> b(n);
  for (auto& c : b) c = static_cast<char>(rng());
  return b;
}

// A hostile case whose answer the protocol fixes: `oks` OK replies, then an error reply
// containing `expect`, then EOF.
void expect_refusal(const std::string& name, bool with_hello, const std::vector<char>& bytes, const std::string& expect,
                    std::size_t oks = 0) {
  const int fd = connect_raw();
  if (fd < 0) return failure(name + ": cannot connect to the store");
  if (with_hello && !hello(fd)) {
    ::close(fd);
    return failure(name + ": the valid hello was refused");
  }
  send_some(fd, bytes);
  const Outcome o = read_replies_until_close(fd, 10000);
  ::close(fd);
  if (o.replies.size() != oks + 1)
    return failure(fmt::format("{}: expected {} replies, got {}", name, oks + 1, o.replies.size()));
  for (std::size_t i = 0; i < oks; ++i)
    if (!o.replies[i].ok) return failure(fmt::format("{}: reply {} is an error", name, i));
  const auto& last = o.replies.back();
  const std::string msg(last.payload.begin(), last.payload.end());
  if (last.ok) return failure(fmt::format("{}: expected an error reply, got OK", name));
  if (msg.find(expect) == std::string::npos)
    failure(fmt::format("{}: error '{}' does not contain '{}'", name, msg, expect));
  if (!o.closed) failure(name + ": the store did not close the connection after its error");
}

// Bytes with no defined answer (random, or a frame cut short): sent, then we hang up.
void send_and_hang_up(bool with_hello, const std::vector<char>& bytes) {
  const int fd = connect_raw();
  if (fd < 0) return failure("cannot connect to the store");
  if (with_hello) hello(fd);
  send_some(fd, bytes, 500);
  read_replies_until_close(fd, 20);
  ::close(fd);
}

void hostile(std::mt19937_64& rng, std::uint64_t i) {
  const std::string tag = fmt::format("case {}", i);
  switch (i < 12 ? i : rng() % 12) {  // every case at least once, then at random
    case 0:                           // the crash of issue 6, unauthenticated
      expect_refusal(tag + " G+0xFFFFFFFA", false, raw_head('G', 0xFFFFFFFAu), "the first frame must be a hello");
      break;
    case 1:  // the crash of issue 6, with a valid token
      expect_refusal(tag + " hello,G+0xFFFFFFFA", true, raw_head('G', 0xFFFFFFFAu),
                     "key length 4294967290 exceeds the maximum 4096");
      break;
    case 2: {  // value length near 2^32 (would wrap 32-bit sums)
      auto b = raw_head('S', 1);
      b.push_back('k');
      for (char c : {'\xf7', '\xff', '\xff', '\xff'}) b.push_back(c);
      expect_refusal(tag + " value 0xFFFFFFF7", true, b, "set value length 4294967287 exceeds the maximum");
      break;
    }
    case 3:  // unknown op after a valid hello
      expect_refusal(tag + " unknown op", true, {'Q', 1, 0, 0, 0, 'k', 0, 0, 0, 0}, "unknown op byte 0x51");
      break;
    case 4:  // no token at all
      expect_refusal(tag + " no token", false, proto::encode_request({proto::Op::kSet, "job/x", {'1'}}),
                     "the first frame must be a hello");
      break;
    case 5:  // a wrong token
      expect_refusal(tag + " wrong token", false, proto::encode_hello("0123456789abcdef0123456789abcdef"),
                     "wrong job token");
      break;
    case 6:  // a second hello
      expect_refusal(tag + " second hello", true, proto::encode_hello(g_token), "a second hello");
      break;
    case 7: {  // random bytes after a valid hello whose first byte is no op
      auto b = random_bytes(rng, 1 + rng() % 2000);
      while (b[0] == 'H' || b[0] == 'S' || b[0] == 'G' || b[0] == 'A') b[0] = static_cast<char>(rng());
      expect_refusal(tag + " random after hello", true, b, "unknown op byte");
      break;
    }
    case 8:  // random bytes, with or without hello: anything may happen but a crash
      send_and_hang_up(rng() % 2 == 0, random_bytes(rng, rng() % 3000));
      break;
    case 9: {  // a valid frame cut short
      auto f = proto::encode_request({proto::Op::kSet, "attack/cut", random_bytes(rng, 100)});
      f.resize(rng() % f.size());
      send_and_hang_up(true, f);
      break;
    }
    case 10: {  // a valid get, then garbage: the get is answered (the key exists), then refused
      auto f = proto::encode_request({proto::Op::kGet, "attack/ready", {}});
      f.push_back('\x01');
      expect_refusal(tag + " get+garbage", true, f, "unknown op byte 0x01", 1);
      break;
    }
    default: {  // empty key and wrong add sizes
      const bool add = rng() % 2 == 0;
      expect_refusal(
          tag + (add ? " add 3 bytes" : " empty key"), true,
          add ? std::vector<char>{'A', 1, 0, 0, 0, 'k', 3, 0, 0, 0, 1, 2, 3} : std::vector<char>{'S', 0, 0, 0, 0},
          add ? "add needs an 8-byte value" : "empty key");
      break;
    }
  }
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"rt_store_attack: hostile clients against a live store, then a normal job"};
  std::uint64_t seed = 1;
  int connections = 100;
  std::string backends_arg = "gloo,shm";
  app.add_option("--seed", seed);
  app.add_option("--connections", connections)->check(CLI::Range(0, 100000));
  app.add_option("--backends", backends_arg, "backends of the final checked all_reduce");
  CLI11_PARSE(app, argc, argv);
  const auto timeout = std::chrono::seconds(30);
  const char* addr = std::getenv("CHORUS_STORE_ADDR");
  const char* token = std::getenv("CHORUS_STORE_TOKEN");
  const char* rank_s = std::getenv("CHORUS_RANK");
  const char* size_s = std::getenv("CHORUS_WORLD_SIZE");
  // Under mpirun: the store of the runtime's own bootstrap (rank 0 serves it; address and
  // token reach the other ranks over MPI), kept alive until the end.
  std::unique_ptr<rt::World> world;
  std::string addr_s, token_s;
  int rank = 0, size = 1;
  if (addr == nullptr && rt::launched_by_mpirun()) {
    try {
      world = std::make_unique<rt::World>(rt::bootstrap_world(true, timeout));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rt_store_attack: bootstrap under mpirun failed: %s\n", e.what());
      return 1;
    }
    addr_s = world->store_address;
    token_s = world->store_token;
    rank = world->rank;
    size = world->size;
  } else if (addr != nullptr && token != nullptr && rank_s != nullptr && size_s != nullptr) {
    addr_s = addr;
    token_s = token;
    rank = std::atoi(rank_s);
    size = std::atoi(size_s);
  } else {
    std::fprintf(stderr, "rt_store_attack: run me under chorus launch or mpirun\n");
    return 2;
  }
  const auto [host, port] = rt::parse_host_port(addr_s, "store address");
  g_host = host;
  g_port = port;
  g_token = token_s;
  try {
    rt::TcpStore store(host, port, timeout, g_token);
    if (rank == 0) store.set_string("attack/ready", "1");
    store.get("attack/ready", timeout);

    // 1. Connections held open through everything below.
    std::vector<int> held;
    {  // never reads: pipelines gets of an 8 MiB value
      const int fd = connect_raw();
      if (fd < 0 || !hello(fd)) throw rt::CommError("the non-reading client could not say hello");
      const std::string big_key = fmt::format("attack/big/{}", rank);
      store.set(big_key, std::vector<char>(8 << 20, 'b'));
      std::vector<char> gets;
      for (int i = 0; i < 40; ++i) {
        const auto f = proto::encode_request({proto::Op::kGet, big_key, {}});
        gets.insert(gets.end(), f.begin(), f.end());
      }
      send_some(fd, gets, 500);
      held.push_back(fd);
    }
    held.push_back(connect_raw());  // never says hello
    {                               // stuck halfway through a 1 MiB set
      const int fd = connect_raw();
      if (fd < 0 || !hello(fd)) throw rt::CommError("the half-frame client could not say hello");
      auto f = proto::encode_request({proto::Op::kSet, "attack/half", std::vector<char>(1 << 20, 'h')});
      f.resize(f.size() / 2);
      send_some(fd, f);
      held.push_back(fd);
    }

    // 2. Hostile connections from several threads.
    const int threads = 6;
    std::vector<std::thread> pool;
    std::atomic<int> next{0};
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        std::mt19937_64 rng(seed + static_cast<std::uint64_t>(rank) * 1000 + static_cast<std::uint64_t>(t));
        for (int i = next++; i < connections; i = next++) hostile(rng, static_cast<std::uint64_t>(i));
      });
    }
    for (auto& t : pool) t.join();

    // 3. A normal job through the same store, the held connections still open.
    store.set_string(fmt::format("job/name/{}", rank), fmt::format("rank-{}", rank * rank));
    store.barrier("job/b1", size, timeout);
    for (int r = 0; r < size; ++r) {
      const auto v = store.get_string(fmt::format("job/name/{}", r), timeout);
      if (v != fmt::format("rank-{}", r * r)) failure(fmt::format("job: rank {}'s name read back as '{}'", r, v));
    }
    store.add("job/sum", rank + 1);
    store.barrier("job/b2", size, timeout);
    const std::int64_t sum = store.add("job/sum", 0);
    if (sum != static_cast<std::int64_t>(size) * (size + 1) / 2)
      failure(fmt::format("job: counter is {}, expected {}", sum, size * (size + 1) / 2));
    try {
      rt::TcpStore wrong(host, port, timeout, "not-the-token");
      failure("a client with a wrong token was let in");
    } catch (const rt::CommError& e) {
      if (std::string(e.what()).find("the store refused: wrong job token") == std::string::npos)
        failure(std::string("wrong token: unexpected message: ") + e.what());
    }
    const auto backends = chorus::split_list(backends_arg);
    rt::init(backends);
    for (const auto& backend : backends) {
      std::vector<std::int32_t> x(1031), y(1031);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = rank * 1000 + static_cast<std::int32_t>(i);
      rt::all_reduce(backend, x.data(), y.data(), x.size(), rt::DType::i32, rt::ReduceOp::sum);
      for (std::size_t i = 0; i < y.size(); ++i) {
        // sum over r of r*1000 + i
        const std::int32_t expect = 1000 * size * (size - 1) / 2 + size * static_cast<std::int32_t>(i);
        if (y[i] != expect) {
          failure(fmt::format("{} all_reduce: y[{}] = {}, expected {}", backend, i, y[i], expect));
          break;
        }
      }
    }
    rt::finalize();
    store.barrier("job/end", size, timeout);  // nobody closes the held connections early
    // Under mpirun the store lives in rank 0: it leaves last, once every rank is past the barrier.
    store.add("job/left", 1);
    if (world && rank == 0) {
      const auto until = Clock::now() + timeout;
      while (store.add("job/left", 0) < size) {
        if (Clock::now() > until) throw rt::CommError("not every rank left the store within the timeout");
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    for (int fd : held)
      if (fd >= 0) ::close(fd);
  } catch (const std::exception& e) {
    failure(std::string("rank stopped: ") + e.what());
  }
  for (const auto& f : g_failures) std::fprintf(stderr, "rank %d: FAIL %s\n", rank, f.c_str());
  if (!g_failures.empty()) return 1;
  std::printf("rank %d: %d hostile connections to %s refused or survived; the job completed\n", rank, connections,
              addr_s.c_str());
  return 0;
}

}  // namespace rt_store_attack_program
