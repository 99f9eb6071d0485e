#include "rt/rendezvous/bootstrap.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fmt/format.h>

#include "core/error.h"
#include "rt/rendezvous/mpi_env.h"

namespace chorus::rt {

namespace {

int env_int(const char* name, int lo, int hi) {
  const char* v = std::getenv(name);
  try {
    const int x = std::stoi(v);
    if (x < lo || x > hi) throw std::out_of_range(name);
    return x;
  } catch (const std::exception&) {
    throw InputError(std::string("environment ") + name,
                     fmt::format("expected an integer in [{}, {}], got '{}'", lo, hi, v));
  }
}

std::string host_name() {
  char buf[256] = {0};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

}  // namespace

World bootstrap_world(bool want_mpi, std::chrono::milliseconds timeout) {
  World w;
  if (std::getenv("CHORUS_RANK") != nullptr) {
    w.launcher = "chorus-launch";
    w.size = env_int("CHORUS_WORLD_SIZE", 1, 1 << 20);
    w.rank = env_int("CHORUS_RANK", 0, w.size - 1);
    const char* addr = std::getenv("CHORUS_STORE_ADDR");
    if (addr == nullptr)
      throw InputError("environment CHORUS_STORE_ADDR", "not set (start ranks with chorus launch)");
    const auto [host, port] = parse_host_port(addr, "environment CHORUS_STORE_ADDR");
    w.store = std::make_unique<TcpStore>(host, port, timeout);
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
      w.server = std::make_unique<TcpStoreServer>(w.single_host ? "127.0.0.1" : "0.0.0.0");
      const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
      info = fmt::format("{}:{} mpi{}x{}", w.single_host ? "127.0.0.1" : host_name(),
                         w.server->port(), ::getpid(), stamp % 1000000007);
    }
    info = mpi_broadcast_string(info, 0);
    const auto space = info.find(' ');
    w.run_id = info.substr(space + 1);
    const auto [host, port] = parse_host_port(info.substr(0, space), "mpirun rendezvous");
    w.store = std::make_unique<TcpStore>(host, port, timeout);
    return w;
  }
  w.launcher = "none";
  w.store = std::make_unique<InMemoryStore>();
  w.run_id = fmt::format("solo{}", ::getpid());
  return w;
}

}  // namespace chorus::rt
