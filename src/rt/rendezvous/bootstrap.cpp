#include "rt/rendezvous/bootstrap.h"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fmt/format.h>
#include <string_view>

#include "core/error.h"
#include "rt/errors.h"
#include "rt/rendezvous/mpi_env.h"

namespace chorus::rt {

namespace {

int env_int(const char* name, int lo, int hi) {
  const char* v = std::getenv(name);
  if (v == nullptr)
    throw InputError(std::string("environment ") + name, "not set (start ranks with chorus launch, which sets it)");
  try {
    std::size_t used = 0;
    const int x = std::stoi(v, &used);
    if (x < lo || x > hi || v[used] != '\0') throw std::out_of_range(name);
    return x;
  } catch (const std::exception&) {
    throw InputError(std::string("environment ") + name,
                     fmt::format("expected an integer in [{}, {}], got '{}'", lo, hi, v));
  }
}

// The address rank 0 advertises for its store when ranks span hosts: its gloo host (the host
// name, or CHORUS_GLOO_HOST) resolved on rank 0 to a numeric address. Other ranks must not
// resolve rank 0's name themselves: hosts that share a name (cloned machines, containers) each
// resolve it to their own address. A loopback result (Debian maps the host name to 127.0.1.1)
// could never be reached from another host, so it is an error naming the fix.
std::string store_address_across_hosts(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res); rc != 0 || res == nullptr)
    throw CommError(fmt::format("mpirun rendezvous: rank 0 cannot resolve its host '{}': {}", host,
                                rc != 0 ? ::gai_strerror(rc) : "no address"));
  char buf[NI_MAXHOST] = {0};
  const int rc = ::getnameinfo(res->ai_addr, res->ai_addrlen, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST);
  bool loopback = false;
  if (res->ai_family == AF_INET)
    loopback = (ntohl(reinterpret_cast<const sockaddr_in*>(res->ai_addr)->sin_addr.s_addr) >> 24) == 127;
  else if (res->ai_family == AF_INET6)
    loopback = IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(res->ai_addr)->sin6_addr);
  ::freeaddrinfo(res);
  if (rc != 0) throw CommError(fmt::format("mpirun rendezvous: cannot format the address of '{}'", host));
  if (loopback)
    throw CommError(
        fmt::format("mpirun rendezvous: ranks span several hosts but rank 0's host '{}' "
                    "resolves to the loopback address {}; set CHORUS_GLOO_HOST to an "
                    "address the other hosts reach",
                    host, buf));
  return buf;
}

World bootstrap_external(const ExternalWorld& e, bool want_mpi, std::chrono::milliseconds timeout) {
  if (e.store == nullptr) throw InputError("init: InitOptions::world", "no store given");
  if (e.size < 1 || e.rank < 0 || e.rank >= e.size)
    throw InputError("init: InitOptions::world",
                     fmt::format("rank {} of a world of {}: need 0 <= rank < size", e.rank, e.size));
  World w;
  w.launcher = "external";
  w.rank = e.rank;
  w.size = e.size;
  w.store = e.store;
  if (want_mpi) {
    if (!launched_by_mpirun())
      throw InputError("init",
                       "backend 'mpi' needs ranks started by mpirun (mpirun -n N prog); "
                       "under torchrun or chorus launch use shm or gloo");
    mpi_ensure_initialized();
    if (mpi_world_rank() != w.rank || mpi_world_size() != w.size)
      throw InputError("init: InitOptions::world",
                       fmt::format("rank {} of {} disagrees with mpirun's rank {} of {}: give the ranks mpirun gave",
                                   w.rank, w.size, mpi_world_rank(), mpi_world_size()));
  }
  // Every rank counts its own inits on this store, so all ranks agree on the generation and a
  // store used for a second init does not hand out the first one's keys.
  const std::int64_t generation = w.store->add(fmt::format("chorus/init/{}", w.rank), 1);
  const std::string base = fmt::format("chorus/{}", generation);
  const std::string host = host_name();
  w.store->set_string(fmt::format("{}/host/{}", base, w.rank), host);
  if (w.rank == 0) {
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    w.store->set_string(base + "/run_id", fmt::format("ext{}x{}", ::getpid(), stamp % 1000000007));
  }
  for (int j = 0; j < w.size; ++j)
    if (w.store->get_string(fmt::format("{}/host/{}", base, j), timeout) != host) w.single_host = false;
  w.run_id = w.store->get_string(base + "/run_id", timeout);
  if (!w.single_host) w.gloo_host = host;
  if (const char* h = std::getenv("CHORUS_GLOO_HOST")) w.gloo_host = h;
  return w;
}

}  // namespace

bool several_ranks_without_mpirun(const ExternalWorld* external) {
  if (launched_by_mpirun()) return false;
  const char* size = std::getenv("CHORUS_WORLD_SIZE");
  return (std::getenv("CHORUS_RANK") != nullptr && size != nullptr && std::string_view(size) != "1") ||
         (external != nullptr && external->size > 1);
}

World bootstrap_world(bool want_mpi, std::chrono::milliseconds timeout, const ExternalWorld* external) {
  if (external != nullptr) return bootstrap_external(*external, want_mpi, timeout);
  World w;
  if (std::getenv("CHORUS_RANK") != nullptr) {
    w.launcher = "chorus-launch";
    w.size = env_int("CHORUS_WORLD_SIZE", 1, 1 << 20);
    w.rank = env_int("CHORUS_RANK", 0, w.size - 1);
    const char* addr = std::getenv("CHORUS_STORE_ADDR");
    if (addr == nullptr) throw InputError("environment CHORUS_STORE_ADDR", "not set (start ranks with chorus launch)");
    const auto [host, port] = parse_host_port(addr, "environment CHORUS_STORE_ADDR");
    const char* token = std::getenv("CHORUS_STORE_TOKEN");
    if (token == nullptr || *token == '\0')
      throw InputError("environment CHORUS_STORE_TOKEN", "not set (start ranks with chorus launch)");
    w.store = std::make_unique<TcpStore>(host, port, timeout, token);
    w.store_address = addr;
    w.store_token = token;
    const char* run_id = std::getenv("CHORUS_RUN_ID");
    w.run_id = run_id != nullptr ? run_id : fmt::format("p{}", port);
    return w;
  }
  if (launched_by_mpirun() || want_mpi) {
    mpi_ensure_initialized();
    w.launcher = launched_by_mpirun() ? "mpirun" : "none";
    w.rank = mpi_world_rank();
    w.size = mpi_world_size();
    w.single_host = mpi_all_on_one_host();
    if (!w.single_host) w.gloo_host = host_name();
    if (const char* h = std::getenv("CHORUS_GLOO_HOST")) w.gloo_host = h;
    std::string info;
    if (w.rank == 0) {
      // An error here must reach every rank (they wait in the broadcast): sent as "!message".
      try {
        const std::string address = w.single_host ? "127.0.0.1" : store_address_across_hosts(w.gloo_host);
        w.server = std::make_unique<TcpStoreServer>(w.single_host ? "127.0.0.1" : "0.0.0.0");
        const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
        // "host:port run_id token": the job token travels over MPI, never through the network
        // the store listens on.
        info = fmt::format("{}:{} mpi{}x{} {}", address, w.server->port(), ::getpid(), stamp % 1000000007,
                           w.server->token());
      } catch (const std::exception& e) {
        info = std::string("!") + e.what();
      }
    }
    info = mpi_broadcast_string(info, 0);
    if (info.starts_with('!')) throw CommError(info.substr(1));
    const auto space = info.find(' ');
    const auto space2 = info.find(' ', space + 1);
    if (space == std::string::npos || space2 == std::string::npos)
      throw CommError("mpirun rendezvous: malformed broadcast from rank 0");
    w.run_id = info.substr(space + 1, space2 - space - 1);
    const auto [host, port] = parse_host_port(info.substr(0, space), "mpirun rendezvous");
    w.store_token = info.substr(space2 + 1);
    w.store = std::make_unique<TcpStore>(host, port, timeout, w.store_token);
    w.store_address = info.substr(0, space);
    return w;
  }
  w.launcher = "none";
  w.store = std::make_unique<InMemoryStore>();
  // Unique among the runtimes alive in this process (their stores are distinct objects), so
  // that two of them never share a segment name.
  w.run_id = fmt::format("solo{}x{:x}", ::getpid(), reinterpret_cast<std::uintptr_t>(w.store.get()));
  return w;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

}  // namespace chorus::rt
