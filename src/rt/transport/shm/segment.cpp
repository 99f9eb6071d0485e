#include "rt/transport/shm/segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
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

}  // namespace chorus::rt
