#pragma once
// The rendezvous store between processes: the launcher (chorus launch) or rank 0 (under
// mpirun) serves it over TCP; every rank is a client. The wire format is store_protocol.h;
// every connection must first present the job token the server made (job_token()).
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
  // Connects to host:port, retrying until `timeout`, and presents `token`. A refused token (or
  // any error the server reports) is a CommError carrying the server's message.
  TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout, const std::string& token);
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

// Serves the store on a TCP port from one background thread polling non-blocking sockets:
// a client that stops reading or sends garbage stalls nobody else. Bad frames get an error
// reply and the connection is closed.
class TcpStoreServer {
 public:
  // Binds `bind_host` ("127.0.0.1", "0.0.0.0") on `port` (0: any free port) and makes a
  // random job token that clients must present.
  // `token`: the job token clients must present; empty: make a fresh random one.
  explicit TcpStoreServer(const std::string& bind_host, int port = 0, std::string token = {});
  ~TcpStoreServer();
  int port() const { return port_; }
  const std::string& token() const { return token_; }

 private:
  struct Impl;
  void serve();
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::string token_;
  std::thread thread_;
};

// 128 random bits from getrandom(2), as 32 hex digits.
std::string make_job_token();

}  // namespace chorus::rt
