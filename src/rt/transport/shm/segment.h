#pragma once
// A shared-memory segment mapped by every rank of one host: anonymous memory (memfd_create)
// that has no name in any file system, so nothing outlives the processes that map it. The
// creating rank reserves every byte up front (fallocate), so too little memory is an error at
// creation instead of SIGBUS at first touch; other ranks receive the descriptor (fd_passing.h)
// and map it.
#include <cstddef>
#include <string>

namespace chorus::rt {

class ShmSegment {
 public:
  ShmSegment() = default;
  // Creates anonymous shared memory of `bytes`, reserved and sealed against resizing, and maps
  // it. Too little memory (tmpfs limit, cgroup limit, RLIMIT_FSIZE) throws InputError naming
  // `bytes`, `what` it is for and how to raise the limit.
  static ShmSegment create(std::size_t bytes, const std::string& what);
  // Maps a segment received from its creator; checks its size and seals. Takes ownership of `fd`.
  static ShmSegment adopt(int fd, std::size_t bytes);
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ~ShmSegment();
  char* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  // The descriptor to pass to other ranks (-1 once released).
  int fd() const { return fd_; }
  // Closes the descriptor; the mapping stays valid.
  void release_fd();

 private:
  void reset() noexcept;
  int fd_ = -1;
  char* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace chorus::rt
