#pragma once
// Passing a file descriptor to the other ranks of one host: SCM_RIGHTS over a Unix-domain
// stream socket in the abstract namespace (no file, so nothing to clean up; the name vanishes
// with the socket). The server's name and a random token travel through the rendezvous store;
// a client must present the token and run as the same user (SO_PEERCRED) to get the descriptor.
#include <chrono>
#include <string>

namespace chorus::rt {

class FdServer {
 public:
  // Listens on a fresh random abstract name.
  FdServer();
  FdServer(const FdServer&) = delete;
  FdServer& operator=(const FdServer&) = delete;
  ~FdServer();
  // "<name> <token>", what a client needs (to be published through the store).
  const std::string& contact() const { return contact_; }
  // Hands `fd` to `clients` clients that present the token, then stops listening. Throws
  // TimeoutError if they have not all come by `deadline`.
  void serve(int fd, int clients, std::chrono::steady_clock::time_point deadline);

 private:
  int listener_ = -1;
  std::string name_, token_, contact_;
};

// Connects to the server described by `contact` and returns the descriptor it hands out.
int receive_fd(const std::string& contact, std::chrono::steady_clock::time_point deadline);

}  // namespace chorus::rt
