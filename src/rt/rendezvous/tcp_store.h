#pragma once
// The rendezvous store between processes: the launcher (chorus launch) or rank 0 (under
// mpirun) serves it over TCP; every rank is a client.
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rt/rendezvous/store.h"

namespace chorus::rt {

// Client of a TcpStoreServer. Thread-safe (one request at a time).
class TcpStore : public Store {
 public:
  // Connects to host:port, retrying until `timeout`.
  TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout);
  ~TcpStore() override;
  void set(const std::string& key, const std::vector<char>& value) override;
  std::vector<char> get(const std::string& key, std::chrono::milliseconds timeout) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;

 private:
  std::vector<char> request(char op, const std::string& key, const std::vector<char>& value,
                            std::chrono::milliseconds timeout);
  std::mutex mutex_;
  int fd_ = -1;
  std::string address_;
};

// Serves the store on a TCP port from a background thread.
class TcpStoreServer {
 public:
  // Binds `bind_host` ("127.0.0.1", "0.0.0.0") on `port` (0: any free port).
  explicit TcpStoreServer(const std::string& bind_host, int port = 0);
  ~TcpStoreServer();
  int port() const { return port_; }

 private:
  struct Impl;
  void serve();
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace chorus::rt
