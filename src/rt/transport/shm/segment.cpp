#include "rt/transport/shm/segment.h"

#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <optional>

#include "core/error.h"
#include "rt/errors.h"

namespace chorus::rt {

namespace {

constexpr unsigned kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

// "MemAvailable" of /proc/meminfo, in bytes.
std::optional<std::size_t> mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::size_t kib = 0;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

// limit - usage of one cgroup directory; nullopt if unlimited or unreadable.
std::optional<std::size_t> room_at(const std::string& dir, const char* limit_file, const char* usage_file) {
  std::ifstream limit_in(dir + "/" + limit_file), usage_in(dir + "/" + usage_file);
  std::string limit_text;
  std::size_t usage = 0;
  if (!(limit_in >> limit_text) || !(usage_in >> usage) || limit_text == "max") return std::nullopt;
  try {
    const std::size_t limit = std::stoull(limit_text);
    if (limit >= (std::size_t{1} << 62)) return std::nullopt;  // v1's "unlimited"
    return limit > usage ? limit - usage : 0;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// What the calling process's memory cgroup may still charge: v2 memory.max - memory.current
// (the process's cgroup and every ancestor), or v1 memory.limit_in_bytes - memory.usage_in_bytes.
std::optional<std::size_t> cgroup_headroom() {
  std::ifstream self("/proc/self/cgroup");
  std::string line, v2, v1;
  while (std::getline(self, line)) {
    if (line.rfind("0::", 0) == 0) v2 = line.substr(3);
    const auto at = line.find(":memory:");
    if (at != std::string::npos) v1 = line.substr(at + 8);
  }
  std::optional<std::size_t> least;
  auto take = [&](std::optional<std::size_t> room) {
    if (room && (!least || *room < *least)) least = room;
  };
  if (!v2.empty()) {
    for (std::string p = v2;;) {
      take(room_at("/sys/fs/cgroup" + p, "memory.max", "memory.current"));
      if (p.empty() || p == "/") break;
      p = p.substr(0, p.rfind('/'));
    }
  }
  if (!v1.empty()) {
    // Inside a container the process's own cgroup is usually mounted at the root.
    take(room_at("/sys/fs/cgroup/memory" + v1, "memory.limit_in_bytes", "memory.usage_in_bytes"));
    take(room_at("/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.usage_in_bytes"));
  }
  return least;
}

std::string mib(std::size_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

// fallocate, with SIGXFSZ (sent when RLIMIT_FSIZE is exceeded; its default action kills the
// process) blocked in this thread and discarded, so the limit is an EFBIG error instead.
int reserve(int fd, std::size_t bytes) {
  sigset_t xfsz, old;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &xfsz, &old);
  int err = 0;
  do {
    err = ::fallocate(fd, 0, 0, static_cast<off_t>(bytes)) == 0 ? 0 : errno;
  } while (err == EINTR);
  if (err == EFBIG) {
    const timespec zero{0, 0};
    while (sigtimedwait(&xfsz, nullptr, &zero) == SIGXFSZ) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return err;
}

}  // namespace

ShmSegment ShmSegment::create(std::size_t bytes, const std::string& what) {
  const std::string need = fmt::format("{} bytes ({}) of shared memory for {}", bytes, mib(bytes), what);
  // The memfd lives on the kernel's internal tmpfs, which has no size limit of its own: refuse
  // up front what memory or the cgroup cannot hold (fallocate would otherwise wake the OOM killer).
  if (const auto avail = mem_available(); avail && bytes > *avail)
    throw InputError("shm", fmt::format("cannot reserve {}: only {} of memory is available "
                                        "(MemAvailable); free memory, use fewer ranks per host or "
                                        "a smaller CHORUS_SHM_SLOT_BYTES",
                                        need, mib(*avail)));
  if (const auto room = cgroup_headroom(); room && bytes > *room)
    throw InputError("shm", fmt::format("cannot reserve {}: the memory cgroup allows only {} more; "
                                        "raise the container's memory limit (e.g. docker "
                                        "run --memory), use fewer ranks per host or a smaller "
                                        "CHORUS_SHM_SLOT_BYTES",
                                        need, mib(*room)));
  const int fd = ::memfd_create("chorus-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) throw CommError(fmt::format("shm: memfd_create for {}: {}", need, std::strerror(errno)));
  ShmSegment s;
  s.fd_ = fd;
  if (const int err = reserve(fd, bytes); err != 0) {
    std::string how;
    if (err == EFBIG)
      how = fmt::format(
          "the file size limit (RLIMIT_FSIZE, {} bytes) is lower; raise it with "
          "`ulimit -f unlimited` (or prlimit --fsize)",
          [] {
            rlimit r{};
            ::getrlimit(RLIMIT_FSIZE, &r);
            return std::to_string(r.rlim_cur);
          }());
    else if (err == ENOMEM || err == ENOSPC)
      how =
          "out of memory (or of the memory cgroup's limit); free memory, raise the container's "
          "memory limit, use fewer ranks per host or a smaller CHORUS_SHM_SLOT_BYTES";
    else
      how = std::strerror(err);
    throw InputError("shm", fmt::format("cannot reserve {}: {} ({})", need, how, std::strerror(err)));
  }
  if (::fcntl(fd, F_ADD_SEALS, kSeals) != 0)
    throw CommError(fmt::format("shm: cannot seal the segment: {}", std::strerror(errno)));
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) throw CommError(fmt::format("shm: cannot map {}: {}", need, std::strerror(errno)));
  s.data_ = static_cast<char*>(p);
  s.bytes_ = bytes;
  return s;
}

ShmSegment ShmSegment::adopt(int fd, std::size_t bytes) {
  ShmSegment s;
  s.fd_ = fd;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) != bytes)
    throw CommError(
        fmt::format("shm: the received segment has {} bytes, expected {} (ranks "
                    "disagree on the layout: set CHORUS_SHM_SLOT_BYTES the same everywhere)",
                    static_cast<long long>(st.st_size), bytes));
  // Sealed by its creator: nobody can shrink it under our mapping (which would be SIGBUS).
  if ((static_cast<unsigned>(::fcntl(fd, F_GET_SEALS)) & kSeals) != kSeals)
    throw CommError("shm: the received segment is not sealed against resizing");
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (p == MAP_FAILED) throw CommError(fmt::format("shm: cannot map the received segment: {}", std::strerror(errno)));
  s.data_ = static_cast<char*>(p);
  s.bytes_ = bytes;
  return s;
}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept { *this = std::move(other); }

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.fd_;
    data_ = other.data_;
    bytes_ = other.bytes_;
    other.fd_ = -1;
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

ShmSegment::~ShmSegment() { reset(); }

void ShmSegment::release_fd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void ShmSegment::reset() noexcept {
  if (data_ != nullptr) ::munmap(data_, bytes_);
  release_fd();
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace chorus::rt
