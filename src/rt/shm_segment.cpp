#include "rt/shm_segment.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fmt/format.h>

#include "rt/errors.h"

namespace chorus::rt {

ShmSegment ShmSegment::create(const std::string& name, std::size_t bytes) {
  return map(name, bytes, true);
}
ShmSegment ShmSegment::open(const std::string& name, std::size_t bytes) {
  return map(name, bytes, false);
}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept { *this = std::move(other); }

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, bytes_);
    name_ = std::move(other.name_);
    data_ = other.data_;
    bytes_ = other.bytes_;
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

ShmSegment::~ShmSegment() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
}

void ShmSegment::unlink() {
  if (!name_.empty()) ::shm_unlink(name_.c_str());
  name_.clear();
}

ShmSegment ShmSegment::map(const std::string& name, std::size_t bytes, bool create) {
  const int flags = create ? (O_RDWR | O_CREAT | O_EXCL) : O_RDWR;
  const int fd = ::shm_open(name.c_str(), flags, 0600);
  if (fd < 0)
    throw CommError(fmt::format("shm: cannot {} segment {}: {}", create ? "create" : "open", name,
                                std::strerror(errno)));
  if (create && ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const std::string err = std::strerror(errno);
    ::close(fd);
    ::shm_unlink(name.c_str());
    throw CommError(fmt::format("shm: cannot size segment {} to {} bytes: {} (is /dev/shm large "
                                "enough?)", name, bytes, err));
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    if (create) ::shm_unlink(name.c_str());
    throw CommError(fmt::format("shm: cannot map segment {}: {}", name, std::strerror(errno)));
  }
  ShmSegment s;
  s.name_ = name;
  s.data_ = static_cast<char*>(p);
  s.bytes_ = bytes;
  return s;
}

void SharedCounter::store_and_wake(std::uint32_t v) {
  value.store(v, std::memory_order_seq_cst);
  if (sleepers.load(std::memory_order_seq_cst) != 0) futex_wake_all(&value);
}

void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected, long timeout_us) {
  timespec ts{};
  ts.tv_sec = timeout_us / 1000000;
  ts.tv_nsec = (timeout_us % 1000000) * 1000;
  // Not FUTEX_PRIVATE: the word lives in memory shared between processes.
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>* word) {
  ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

bool process_dead(int pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  // A zombie still answers kill(); look at its state.
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return false;  // no /proc: trust kill()
  char buf[512] = {0};
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  const char* close_paren = std::strrchr(buf, ')');
  if (n == 0 || close_paren == nullptr || close_paren[1] == 0) return false;
  const char state = close_paren[2];
  return state == 'Z' || state == 'X';
}

}  // namespace chorus::rt
